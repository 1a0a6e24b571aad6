//! `memloop sync` as a user runs it: real processes, the real model, a real shared folder
//! and a real S3-compatible server (`s3s-fs`, built from crates.io by scripts/test-sync.sh,
//! which passes its path in `MEMLOOP_S3S_FS` and runs the tests marked as needing it).
//! Two devices share one key ring carried by `key export` / `key import`; `kill -9` during
//! pushes and pulls (through the folder and through the server, with forgets and an erasure
//! among the writes), a server that stalls and one that dies lose no acknowledged write, and
//! the next sync converges.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

/// One device: its store and key file.
struct Device {
    store: PathBuf,
    key: PathBuf,
}

impl Device {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_memloop"));
        c.arg("--store")
            .arg(&self.store)
            .arg("--key-file")
            .arg(&self.key)
            .args(args)
            .env("AWS_ACCESS_KEY_ID", "memloop-test")
            .env("AWS_SECRET_ACCESS_KEY", "memloop-test-secret")
            .env_remove("MEMLOOP_KEY")
            .env_remove("MEMLOOP_KEY_FILE");
        c
    }

    /// Runs `args`; panics with its stderr when it fails.
    fn run(&self, args: &[&str], stdin: &str) -> String {
        let r = self.try_run(args, stdin);
        assert!(r.0.success(), "memloop {args:?}: {}", r.2);
        r.1
    }

    fn try_run(&self, args: &[&str], stdin: &str) -> (std::process::ExitStatus, String, String) {
        let mut child = self
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        let out = child.wait_with_output().unwrap();
        (
            out.status,
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// Every current memory's text, a page of 5,000 at a time.
    fn texts(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for page in 0.. {
            let offset = (page * 5000).to_string();
            let got = self.run(
                &["list", "--json", "--limit", "5000", "--offset", &offset],
                "",
            );
            let v: serde_json::Value = serde_json::from_str(&got).unwrap();
            let items = v["memories"].as_array().expect("a list of memories");
            out.extend(
                items
                    .iter()
                    .map(|i| i["text"].as_str().unwrap().to_string()),
            );
            if items.len() < 5000 {
                break;
            }
        }
        out
    }

    /// The id and text of every current memory (the first 5,000).
    fn ids(&self) -> Vec<(u64, String)> {
        let got = self.run(&["list", "--json", "--limit", "5000"], "");
        let v: serde_json::Value = serde_json::from_str(&got).unwrap();
        v["memories"]
            .as_array()
            .expect("a list of memories")
            .iter()
            .map(|i| {
                (
                    i["id"].as_u64().unwrap(),
                    i["text"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn ingest(&self, texts: &[String], user: Option<&str>) {
        let lines: String = texts
            .iter()
            .map(|t| match user {
                Some(u) => format!("{}\n", serde_json::json!({ "text": t, "user": u })),
                None => format!("{}\n", serde_json::json!({ "text": t })),
            })
            .collect();
        self.run(
            &["--dedup-threshold", "off", "ingest", "-", "--jsonl"],
            &lines,
        );
    }
}

/// Device A (its ring made with its store) and device B (the ring imported), in `root`.
fn two_devices(root: &Path) -> (Device, Device) {
    let a = Device {
        store: root.join("a"),
        key: root.join("a.key"),
    };
    let b = Device {
        store: root.join("b"),
        key: root.join("b.key"),
    };
    a.run(&["remember", "the first memory of device A"], "");
    let ring = {
        let mut c = a.cmd(&["key", "export"]);
        c.env("MEMLOOP_RING_PASSPHRASE", "carry it by hand");
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let mut c = b.cmd(&["key", "import", &ring]);
    c.env("MEMLOOP_RING_PASSPHRASE", "carry it by hand");
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (a, b)
}

fn sync_json(d: &Device, remote: &[&str]) -> serde_json::Value {
    let mut args = vec!["sync", "--json"];
    args.extend_from_slice(remote);
    let (status, out, err) = d.try_run(&args, "");
    assert!(status.success(), "memloop {args:?}: {status}: {out}{err}");
    serde_json::from_str(&out).unwrap()
}

fn text(i: usize) -> String {
    format!(
        "Field note {i}: the orchard's row {} was pruned in week {}.",
        i % 37,
        i % 52 + 1
    )
}

/// Two devices in `root` write, forget and erase, and one of them syncs through `remote` and
/// is killed at a random moment, `MEMLOOP_SYNC_KILL_ROUNDS` times (10 unless set); then both
/// sync until they converge: nothing acknowledged is lost, nothing forgotten or erased comes
/// back, what was written for the erased user after the erasure stays, and both stores check.
fn kill_9_soak(root: &Path, remote: &[&str]) {
    let (a, b) = two_devices(root);
    let mut acked: Vec<String> = vec!["the first memory of device A".into()];
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x73796e63);
    let rounds: usize = std::env::var("MEMLOOP_SYNC_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let mut killed_running = 0;
    let mut forgotten: Vec<String> = Vec::new();
    let mut erasures = 0;
    for round in 0..rounds {
        // Each device writes (acknowledged when the command returns), then one of them syncs
        // and is killed at a random moment.
        let (writer, other) = if round % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let batch: Vec<String> = (0..150).map(|i| text(round * 1000 + i)).collect();
        writer.ingest(&batch, None);
        acked.extend(batch);
        // In the first round a user's notes, erased by the other device two rounds later
        // (whether it has pulled them yet or not): the erasure travels around killed pushes
        // too, and nothing of the user made before it may be left anywhere. Every third round
        // after it, a note for the user's new life, written on a device that may not have seen
        // the erasure yet (bound by the erasure's time, it stays).
        if round > 2 && round % 3 == 0 {
            let note = vec![format!("Erin's new life, round {round}")];
            writer.ingest(&note, Some("erin"));
            acked.extend(note);
        }
        if round == 0 {
            let notes: Vec<String> = (0..5)
                .map(|i| format!("Erased-user note {round}-{i}"))
                .collect();
            writer.ingest(&notes, Some("erin"));
        }
        if round == 2 {
            other.run(&["erase", "--user", "erin"], "");
            erasures += 1;
        }
        // And forgets two memories it holds (acknowledged too: they must never come back),
        // so killed pushes carry forgets as well as writes.
        for (id, t) in writer
            .ids()
            .into_iter()
            .filter(|(_, t)| t.starts_with("Field note"))
            .take(2)
        {
            writer.run(&["forget", &id.to_string()], "");
            acked.retain(|a| *a != t);
            forgotten.push(t);
        }
        let victim = if rng.gen_bool(0.5) { writer } else { other };
        let mut args = vec!["sync"];
        args.extend_from_slice(remote);
        let mut child: Child = victim
            .cmd(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.gen_range(10..160)));
        if child.try_wait().unwrap().is_none() {
            killed_running += 1;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    // The next syncs converge, with nothing acknowledged lost. In the first round a device
    // may wait for the key of a user the other made (published at the end of a sync, which
    // every kill may have cut short): exit 11 naming only `waiting`. Not in the second.
    for d in [&a, &b] {
        let mut args = vec!["sync", "--json"];
        args.extend_from_slice(remote);
        let (status, out, err) = d.try_run(&args, "");
        if !status.success() {
            let r: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert!(
                status.code() == Some(11)
                    && r["refused"].as_array().is_some_and(|v| v.is_empty())
                    && r["missing"].as_array().is_some_and(|v| v.is_empty()),
                "memloop {args:?}: {status}: {out}{err}"
            );
        }
    }
    for d in [&a, &b, &a, &b] {
        sync_json(d, remote);
    }
    let (ta, tb) = (a.texts(), b.texts());
    let only_a: Vec<_> = ta.difference(&tb).take(5).collect();
    let only_b: Vec<_> = tb.difference(&ta).take(5).collect();
    assert!(
        only_a.is_empty() && only_b.is_empty(),
        "the devices differ: {} only on A ({only_a:?}…), {} only on B ({only_b:?}…)",
        ta.difference(&tb).count(),
        tb.difference(&ta).count()
    );
    for t in &acked {
        assert!(ta.contains(t), "lost: {t:?}");
    }
    for t in &forgotten {
        assert!(!ta.contains(t), "forgotten, and back: {t:?}");
    }
    if erasures > 0 {
        let left: Vec<_> = ta
            .iter()
            .filter(|t| t.starts_with("Erased-user note"))
            .collect();
        assert!(left.is_empty(), "erased, and left: {left:?}");
    }
    for d in [&a, &b] {
        d.run(&["check"], "");
    }
    assert!(
        killed_running >= rounds / 3,
        "only {killed_running} of {rounds} kills hit a running sync"
    );
    eprintln!(
        "{} acknowledged writes, {} forgets, {erasures} erasures, {killed_running} of {rounds} syncs killed while running",
        acked.len(),
        forgotten.len()
    );
}

#[test]
fn kill_9_during_push_and_pull_loses_no_acknowledged_write() {
    let root = tempfile::tempdir().unwrap();
    let url = format!("file://{}", root.path().join("shared").display());
    kill_9_soak(root.path(), &["--remote", url.as_str()]);
}

#[test]
#[ignore = "needs the S3 server: scripts/test-sync.sh"]
fn kill_9_during_push_and_pull_through_a_real_s3_server_loses_no_acknowledged_write() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("s3");
    std::fs::create_dir_all(data.join("memloop-bucket")).unwrap();
    let server = Server::start(&data, free_port());
    let endpoint = server.endpoint();
    kill_9_soak(
        root.path(),
        &[
            "--remote",
            "s3://memloop-bucket/soak",
            "--endpoint",
            endpoint.as_str(),
            "--timeout",
            "10",
        ],
    );
}

#[test]
fn a_sync_the_remote_held_something_back_from_exits_11_and_names_it() {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = two_devices(root.path());
    let shared = root.path().join("shared");
    let url = format!("file://{}", shared.display());
    let remote = ["--remote", url.as_str()];
    let device = sync_json(&a, &remote)["device"]
        .as_str()
        .unwrap()
        .to_string();
    // A's segment replayed under a far-future name of its folder.
    let dir = shared.join("segments").join(&device);
    let first = files(&dir).pop().unwrap();
    std::fs::copy(&first, dir.join("99999999999999999999-000000.seg")).unwrap();
    let (status, out, err) = b.try_run(&["sync", "--remote", url.as_str()], "");
    assert_eq!(status.code(), Some(11), "{out}{err}");
    assert!(out.contains("refused segments/"), "{out}");
    assert!(b.texts().contains("the first memory of device A"));
    std::fs::remove_file(dir.join("99999999999999999999-000000.seg")).unwrap();
    let (status, _, err) = b.try_run(&["sync", "--remote", url.as_str()], "");
    assert!(status.success(), "{err}");
}

/// The S3-compatible server, on loopback, storing under `root`.
struct Server {
    child: Child,
    port: u16,
    root: PathBuf,
}

impl Server {
    fn start(root: &Path, port: u16) -> Server {
        let bin = std::env::var("MEMLOOP_S3S_FS")
            .expect("MEMLOOP_S3S_FS: the s3s-fs binary (scripts/test-sync.sh builds it)");
        let child = Command::new(bin)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--access-key",
                "memloop-test",
                "--secret-key",
                "memloop-test-secret",
            ])
            .arg(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "s3s-fs did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Server {
            child,
            port,
            root: root.to_path_buf(),
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
#[ignore = "needs the S3 server: scripts/test-sync.sh"]
fn two_devices_sync_through_a_real_s3_server() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("s3");
    std::fs::create_dir_all(data.join("memloop-bucket")).unwrap();
    let server = Server::start(&data, free_port());
    let endpoint = server.endpoint();
    let remote = [
        "--remote",
        "s3://memloop-bucket/devices-of-ana",
        "--endpoint",
        endpoint.as_str(),
        "--timeout",
        "3",
    ];
    let (a, b) = two_devices(root.path());
    // Ana's memories, and Bo's: Bo's key is made after the ring was carried to B.
    let ana: Vec<String> = (0..30)
        .map(|i| format!("Ana's secret zq{i:06}x is kept in drawer {i}"))
        .collect();
    let bo: Vec<String> = (0..30)
        .map(|i| format!("Bo's note zq{:06}x about the garden", 1000 + i))
        .collect();
    a.ingest(&ana, Some("ana"));
    a.ingest(&bo, Some("bo"));
    let pushed = sync_json(&a, &remote);
    assert_eq!(pushed["pushed"], 61, "{pushed}");
    let pulled = sync_json(&b, &remote);
    assert_eq!(
        (pulled["pulled"].as_u64(), pulled["unreadable"].as_u64()),
        (Some(61), Some(0)),
        "{pulled}"
    );
    let hit = b.run(
        &[
            "recall",
            "where is Ana's secret 7 kept?",
            "--user",
            "ana",
            "--k",
            "1",
            "--json",
        ],
        "",
    );
    assert!(hit.contains("drawer 7"), "{hit}");
    // B writes; A learns it.
    b.run(&["remember", "device B was here", "--user", "bo"], "");
    sync_json(&b, &remote);
    sync_json(&a, &remote);
    assert!(a.texts().contains("device B was here"));
    // Nothing of a text or its marker in any byte the server stored.
    for f in files(&server.root) {
        let bytes = std::fs::read(&f).unwrap();
        for w in bytes.windows(8) {
            assert!(
                !(&w[..2] == b"zq" && w[2..].iter().all(u8::is_ascii_digit)),
                "{}: plaintext",
                f.display()
            );
        }
        let s = String::from_utf8_lossy(&bytes);
        assert!(
            !s.contains("drawer") && !s.contains("garden") && !s.contains("device B"),
            "{}: plaintext",
            f.display()
        );
    }
    // A copy of the bucket before the erasure.
    let copy = root.path().join("bucket-copy");
    for f in files(&server.root) {
        let dest = copy.join(f.strip_prefix(&server.root).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&f, &dest).unwrap();
    }
    a.run(&["erase", "--user", "ana"], "");
    sync_json(&a, &remote);
    let r = sync_json(&b, &remote);
    assert_eq!(r["erasures"], 1, "{r}");
    for d in [&a, &b] {
        assert!(
            !d.texts().iter().any(|t| t.starts_with("Ana's")),
            "ana's memories left"
        );
        let receipts = d.run(&["receipt", "list"], "");
        assert_eq!(receipts.lines().count(), 1, "{receipts}");
    }
    // The copy, served again, read by a device given the ring as it is now: Ana's rows are
    // sealed under a key no ring holds any more.
    drop(server);
    let old = Server::start(&copy, free_port());
    let late = Device {
        store: root.path().join("late"),
        key: root.path().join("late.key"),
    };
    let ring = {
        let mut c = a.cmd(&["key", "export"]);
        c.env("MEMLOOP_RING_PASSPHRASE", "p");
        String::from_utf8(c.output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string()
    };
    let mut c = late.cmd(&["key", "import", &ring]);
    c.env("MEMLOOP_RING_PASSPHRASE", "p");
    assert!(c.status().unwrap().success());
    let old_endpoint = old.endpoint();
    let r = sync_json(
        &late,
        &[
            "--remote",
            "s3://memloop-bucket/devices-of-ana",
            "--endpoint",
            old_endpoint.as_str(),
        ],
    );
    // Ana's 30 rows from A, and any B pushed again after a recall reinforced them: all
    // unreadable. Everything else (Bo's 30, A's first memory, B's) reads.
    assert!(r["unreadable"].as_u64().unwrap() >= 30, "{r}");
    assert_eq!(r["pulled"], 32, "{r}");
    assert!(!late.texts().iter().any(|t| t.starts_with("Ana's")));
    drop(old);
    // A server that stalls fails the sync within its timeout; one that is gone fails it too;
    // the next sync converges.
    let server = Server::start(&data, free_port());
    let endpoint = server.endpoint();
    let remote = [
        "--remote",
        "s3://memloop-bucket/devices-of-ana",
        "--endpoint",
        endpoint.as_str(),
        "--timeout",
        "3",
    ];
    a.run(
        &[
            "remember",
            "written while the bucket stalled",
            "--user",
            "bo",
        ],
        "",
    );
    server.signal("-STOP");
    let started = Instant::now();
    let args: Vec<&str> = ["sync"].into_iter().chain(remote).collect();
    let (status, _, err) = a.try_run(&args, "");
    assert!(
        !status.success(),
        "a sync against a stalled bucket succeeded"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}: {err}",
        started.elapsed()
    );
    server.signal("-CONT");
    drop(server);
    let (status, _, _) = a.try_run(
        &[
            "sync",
            "--remote",
            "s3://memloop-bucket/devices-of-ana",
            "--endpoint",
            endpoint.as_str(),
            "--timeout",
            "3",
        ],
        "",
    );
    assert!(!status.success(), "a sync against a dead bucket succeeded");
    let server = Server::start(&data, free_port());
    let endpoint = server.endpoint();
    let remote = [
        "--remote",
        "s3://memloop-bucket/devices-of-ana",
        "--endpoint",
        endpoint.as_str(),
    ];
    sync_json(&a, &remote);
    sync_json(&b, &remote);
    assert!(b.texts().contains("written while the bucket stalled"));
    assert_eq!(a.texts(), b.texts());
}
