//! Encryption at rest and erasure through the real binary and the real default model:
//! `--key-file`, `MEMLOOP_KEY`, `erase`, `receipt verify`, `key rotate`, sealed exports.

mod common;

use std::process::Command;

use common::memloop_in;

/// Runs `memloop --store STORE ARGS…` with `MEMLOOP_KEY` set to `passphrase`.
fn with_passphrase(
    store: &std::path::Path,
    passphrase: &str,
    args: &[&str],
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_memloop"))
        .arg("--store")
        .arg(store)
        .args(args)
        .env("MEMLOOP_KEY", passphrase)
        .output()
        .unwrap()
}

#[test]
fn an_encrypted_store_erases_a_user_with_a_verifiable_receipt() {
    let root = tempfile::tempdir().unwrap();
    let (s, key) = (root.path().join("mem"), root.path().join("mem.key"));
    let key = key.to_str().unwrap();
    for (text, user) in [
        ("Ana's blood type is AB negative", "ana"),
        ("Ana takes the 7:40 train to Lyon", "ana"),
        ("Bob collects Soviet-era chess clocks", "bob"),
    ] {
        let r = memloop_in(
            &s,
            &["--key-file", key, "remember", text, "--user", user],
            "",
        );
        assert!(r.ok, "{}", r.err);
    }
    // Without the key: exit status 10, and the store is not readable.
    let r = memloop_in(&s, &["recall", "blood type"], "");
    assert_eq!(r.code, Some(10), "{}", r.err);
    assert!(r.err.contains("encrypted"), "{}", r.err);
    let r = memloop_in(
        &s,
        &[
            "--key-file",
            key,
            "recall",
            "blood type",
            "--user",
            "ana",
            "--k",
            "1",
        ],
        "",
    );
    assert!(r.out.contains("AB negative"), "{} {}", r.out, r.err);
    // Exports are sealed unless asked otherwise; change streams need --plaintext.
    let sealed = root.path().join("sealed.mlx");
    let r = memloop_in(
        &s,
        &["--key-file", key, "export", sealed.to_str().unwrap()],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let bytes = std::fs::read(&sealed).unwrap();
    assert!(!bytes.windows(5).any(|w| w == b"chess"));
    let arrow = root.path().join("c.arrow");
    let r = memloop_in(
        &s,
        &[
            "--key-file",
            key,
            "export",
            arrow.to_str().unwrap(),
            "--format",
            "arrow",
        ],
        "",
    );
    assert_eq!(r.code, Some(3), "{}", r.err);
    for file in std::fs::read_dir(&s).unwrap() {
        let bytes = std::fs::read(file.unwrap().path()).unwrap();
        assert!(!bytes.windows(8).any(|w| w == b"AB negat"));
    }

    let r = memloop_in(&s, &["--key-file", key, "erase", "--user", "ana"], "");
    assert!(r.ok, "{}", r.err);
    let receipt_file = root.path().join("ana.json");
    std::fs::write(&receipt_file, &r.out).unwrap();
    let receipt: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(receipt["user"], "ana");
    assert_eq!(receipt["counts"]["items"], 2);
    assert!(receipt["destroyed_key"].is_string());
    let verify = |file: &std::path::Path, store: bool| {
        let mut args = vec!["receipt", "verify", file.to_str().unwrap()];
        if store {
            args = [&["--key-file", key][..], &args].concat();
            memloop_in(&s, &args, "")
        } else {
            common::memloop(&args, "")
        }
    };
    assert!(verify(&receipt_file, false).ok);
    assert!(verify(&receipt_file, true).ok);
    let mut altered = r.out.clone().into_bytes();
    altered[40] ^= 1;
    let altered_file = root.path().join("altered.json");
    std::fs::write(&altered_file, altered).unwrap();
    assert_eq!(verify(&altered_file, false).code, Some(1));
    // The log prints the receipt again, byte for byte, and verifies as one chain, a second
    // erasure chained to the first.
    let r = memloop_in(&s, &["--key-file", key, "erase", "--user", "nobody"], "");
    assert!(r.ok, "{}", r.err);
    let second = r.out.clone();
    let r = memloop_in(&s, &["--key-file", key, "receipt", "list"], "");
    assert!(r.ok, "{}", r.err);
    assert_eq!(
        r.out,
        format!(
            "{}{second}",
            std::fs::read_to_string(&receipt_file).unwrap()
        )
    );
    let r = memloop_in(&s, &["--key-file", key, "receipt", "verify", "--chain"], "");
    assert!(r.ok && r.out.contains("2 receipts"), "{} {}", r.out, r.err);
    // A key file others may read is refused (exit status 10), before anything is read (on
    // Windows, through its ACL: the engine's platform module tests that).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let r = memloop_in(&s, &["--key-file", key, "stats"], "");
        assert_eq!(r.code, Some(10), "{}", r.err);
        assert!(r.err.contains("chmod 600"), "{}", r.err);
        std::fs::set_permissions(key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    // Bob is still there, after a key rotation too.
    let r = memloop_in(&s, &["--key-file", key, "key", "rotate"], "");
    assert!(r.ok, "{}", r.err);
    let r = memloop_in(&s, &["--key-file", key, "recall", "chess", "--k", "3"], "");
    assert!(
        r.out.contains("chess clocks") && !r.out.contains("AB negative"),
        "{}",
        r.out
    );
}

#[test]
fn a_passphrase_store_refuses_a_wrong_passphrase_with_exit_status_10() {
    let root = tempfile::tempdir().unwrap();
    let (s, key) = (root.path().join("mem"), root.path().join("mem.key"));
    let key = key.to_str().unwrap();
    let out = with_passphrase(
        &s,
        "correct horse",
        &["--key-file", key, "remember", "the vault code is 4411"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = with_passphrase(&s, "wrong horse", &["--key-file", key, "recall", "vault"]);
    assert_eq!(out.status.code(), Some(10));
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrong key"));
    let out = with_passphrase(
        &s,
        "correct horse",
        &["--key-file", key, "recall", "vault", "--k", "1"],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("4411"));
}

/// `key export` on one device and `key import` on another carry the ring by hand: a copy of
/// the store opens with the imported key file (a passphrase of its own there), the wrong ring
/// passphrase is refused with exit status 10, and an existing key file is never replaced.
#[test]
fn a_key_ring_travels_by_export_and_import() {
    let root = tempfile::tempdir().unwrap();
    let (s, key) = (root.path().join("mem"), root.path().join("mem.key"));
    let key = key.to_str().unwrap();
    let r = memloop_in(
        &s,
        &[
            "--key-file",
            key,
            "remember",
            "the boat is moored at pier 9",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let run = |args: &[&str], env: &[(&str, &str)], stdin: &str| {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_memloop"))
            .args(args)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(&["--key-file", key, "key", "export"], &[], "");
    assert_eq!(out.status.code(), Some(1), "no ring passphrase: refused");
    let pass = [("MEMLOOP_RING_PASSPHRASE", "river stone")];
    let out = run(&["--key-file", key, "key", "export"], &pass, "");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("memloop-ring1:"), "{text}");
    assert!(!text.contains(&std::fs::read_to_string(key).unwrap()[..40]));

    // The other device: a copy of the store, the ring imported under a passphrase of its own.
    let other = root.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let (s2, key2) = (other.join("mem"), other.join("mem.key"));
    let key2 = key2.to_str().unwrap();
    let wrong = [("MEMLOOP_RING_PASSPHRASE", "river")];
    let out = run(&["--key-file", key2, "key", "import"], &wrong, &text);
    assert_eq!(out.status.code(), Some(10), "the wrong ring passphrase");
    assert!(!std::path::Path::new(key2).exists());
    let mine = [
        ("MEMLOOP_RING_PASSPHRASE", "river stone"),
        ("MEMLOOP_KEY", "device two"),
    ];
    let out = run(&["--key-file", key2, "key", "import", "-"], &mine, &text);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    copy_dir(&s, &s2);
    let out = with_passphrase(&s2, "device two", &["--key-file", key2, "recall", "boat"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("pier 9"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An existing key file is never replaced.
    let out = run(
        &["--key-file", key, "key", "import", text.trim()],
        &mine,
        "",
    );
    assert!(!out.status.success());
    let r = memloop_in(&s, &["--key-file", key, "recall", "boat"], "");
    assert!(r.out.contains("pier 9"), "{}", r.err);
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}
