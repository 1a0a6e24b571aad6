//! C programs against the built library: the example (`ffi/examples/basic.c`, on the default
//! model) and the hostile-input program (`ffi/tests/c/hostile.c`), compiled with the system C
//! compiler, under AddressSanitizer when the compiler has it.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../contract/check.rs"]
mod check;

/// Where cargo put the test binary, and beside it this crate's cdylib.
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    let lib = dir.join(format!(
        "{}memloop_ffi{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        lib.exists(),
        "{} was not built beside the test",
        lib.display()
    );
    dir
}

fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// True when the compiler can build and run an AddressSanitizer program here.
fn has_asan(scratch: &Path) -> bool {
    let src = scratch.join("probe.c");
    let exe = scratch.join("probe");
    std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    let built = Command::new(compiler())
        .args(["-fsanitize=address", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    built && Command::new(&exe).status().is_ok_and(|s| s.success())
}

/// Compiles `source` against the header and the library; returns the executable.
///
/// Cross-tested (scripts/test-windows.sh runs this test under Wine, which cannot start the
/// Linux cross compiler), the programs were compiled before the run by the cross compiler,
/// with the same flags, beside a copy of this build's library: `MEMLOOP_PREBUILT_C` names
/// that folder, and the test runs them as they are.
fn compile(source: &str, scratch: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("MEMLOOP_PREBUILT_C") {
        let stem = Path::new(source).file_stem().unwrap();
        let exe = Path::new(&dir)
            .join(stem)
            .with_extension(std::env::consts::EXE_EXTENSION);
        assert!(
            exe.exists(),
            "{} was not built before the run",
            exe.display()
        );
        return exe;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let deps = deps_dir();
    let exe = scratch.join(Path::new(source).file_stem().unwrap());
    let mut cc = Command::new(compiler());
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"]);
    if has_asan(scratch) {
        cc.args(["-fsanitize=address", "-fno-omit-frame-pointer"]);
    }
    cc.arg("-I")
        .arg(root.join("include"))
        .arg(root.join(source))
        .arg("-L")
        .arg(&deps)
        // DT_RPATH (not RUNPATH): this build's library is found before any other on
        // LD_LIBRARY_PATH (cargo lists target/debug there, which may hold an older one).
        .arg("-Wl,--disable-new-dtags")
        .arg(format!("-Wl,-rpath,{}", deps.display()))
        .arg("-lmemloop_ffi")
        .arg("-o")
        .arg(&exe);
    let out = cc
        .output()
        .expect("the system C compiler runs (install gcc or set CC)");
    assert!(
        out.status.success(),
        "compiling {source} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn run(exe: &Path, args: &[&Path]) -> (bool, String) {
    let out = Command::new(exe)
        .args(args)
        // Rust's runtime keeps a few allocations for the process's life (thread-locals, the
        // handle registry); ASan reports real misuse, not those.
        .env("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1")
        // cargo's LD_LIBRARY_PATH names target/debug too, where an older `cargo build` may
        // have left a stale copy of the library that the loader would find first (the rpath
        // is a RUNPATH, searched after it): the library built beside this test, only.
        .env("LD_LIBRARY_PATH", deps_dir())
        .output()
        .unwrap();
    // A Windows C runtime writes text-mode line ends.
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
    .replace("\r\n", "\n");
    (out.status.success(), text)
}

#[test]
fn the_c_example_runs_on_the_default_model() {
    let scratch = tempfile::tempdir().unwrap();
    let exe = compile("examples/basic.c", scratch.path());
    let (ok, out) = run(&exe, &[&scratch.path().join("store")]);
    assert!(ok, "basic.c failed:\n{out}");
    // The recall put the staging database first, the context stayed in budget, close worked.
    let recall = out.lines().find(|l| l.starts_with("recall: ")).expect(&out);
    let answer: serde_json::Value = serde_json::from_str(&recall["recall: ".len()..]).unwrap();
    let hits = &answer["hits"];
    assert!(
        hits[0]["text"].as_str().unwrap().contains("PostgreSQL"),
        "{out}"
    );
    let context = out
        .lines()
        .find(|l| l.starts_with("context: "))
        .expect(&out);
    let context: serde_json::Value = serde_json::from_str(&context["context: ".len()..]).unwrap();
    assert!(context["tokens"].as_u64().unwrap() <= 48, "{out}");
    assert!(!context["blocks"].as_array().unwrap().is_empty(), "{out}");
    assert!(
        out.contains("feedback 5 on #1") && out.ends_with("closed\n"),
        "{out}"
    );
}

#[test]
fn hostile_input_gets_error_codes_and_messages_never_a_crash() {
    let scratch = tempfile::tempdir().unwrap();
    let exe = compile("tests/c/hostile.c", scratch.path());
    let crafted = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/huge-length.mlx");
    let (ok, out) = run(&exe, &[&scratch.path().join("store"), &crafted]);
    assert!(ok, "hostile.c:\n{out}");
    assert!(out.contains(", 0 failures"), "{out}");
}

#[test]
fn the_c_abi_keeps_the_contract() {
    // The cross-door table (contract/cases.json): the same requests as the Rust API, the CLI,
    // MCP and Python, through memloop_remember, memloop_recall and memloop_context (and
    // memloop_open for an `open` case).
    let scratch = tempfile::tempdir().unwrap();
    let exe = compile("tests/c/contract.c", scratch.path());
    let table = check::table();
    let seeds = table["memories"].as_array().unwrap();
    let cases = table["cases"].as_array().unwrap();
    let mut input = String::new();
    for seed in seeds {
        // C's JSON gives a memory's times in milliseconds.
        let mut seed = seed.clone();
        for key in ["valid_from", "valid_until"] {
            if let Some(text) = seed[key].as_str() {
                seed[key] = memloop::time::parse_rfc3339(text).unwrap().into();
            }
        }
        // ... and a triple whole, as `triple`.
        if let Some(map) = seed.as_object_mut() {
            if let (Some(head), Some(relation), Some(tail)) = (
                map.remove("head"),
                map.remove("relation"),
                map.remove("tail"),
            ) {
                map.insert(
                    "triple".into(),
                    serde_json::json!({"head": head, "relation": relation, "tail": tail}),
                );
            }
        }
        input.push_str(&format!("remember\t{seed}\n"));
    }
    for case in cases {
        input.push_str(&format!(
            "{}\t{}\n",
            case["op"].as_str().unwrap(),
            case["request"]
        ));
    }
    let lines = run_contract(&exe, scratch.path(), None, &input);
    assert_eq!(lines.len(), seeds.len() + cases.len(), "{lines:?}");
    for (i, (status, id)) in lines[..seeds.len()].iter().enumerate() {
        assert_eq!((*status, id.as_str()), (0, (i + 1).to_string().as_str()));
    }
    let mut failures = Vec::new();
    for (case, (status, output)) in cases.iter().zip(&lines[seeds.len()..]) {
        let got: check::Answer = match *status {
            0 if case["op"] == "remember" => Ok(vec![output.parse().unwrap()]),
            0 => {
                let v: serde_json::Value = serde_json::from_str(output).unwrap();
                Ok(check::ids_of(match case["op"].as_str() {
                    Some("recall") => &v["hits"],
                    Some("open") => &v,
                    _ => &v["blocks"],
                }))
            }
            s => Err(code_named(s).unwrap_or_else(|| format!("status {s}: {output}"))),
        };
        failures.extend(check::check(case, &got).err());
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn an_encrypted_store_through_the_c_abi() {
    let scratch = tempfile::tempdir().unwrap();
    let exe = compile("tests/c/encryption.c", scratch.path());
    let (store, key) = (
        scratch.path().join("store"),
        scratch.path().join("store.key"),
    );
    let (ok, out) = run(&exe, &[&store, &key]);
    assert!(ok, "encryption.c:\n{out}");
    assert!(
        out.contains("encryption: 0 failures") && key.exists(),
        "{out}"
    );
}

#[test]
fn the_c_abi_gives_the_registrys_whole_answers() {
    // The whole-answer pass of the table through memloop_call, on a store opened with the
    // table's `store` options: each answer is the recorded one, field for field.
    let scratch = tempfile::tempdir().unwrap();
    let exe = compile("tests/c/contract.c", scratch.path());
    let table = check::table();
    let mut input = String::new();
    for seed in table["memories"].as_array().unwrap() {
        input.push_str(&format!("call:remember\t{seed}\n"));
    }
    let calls = check::whole_answer_calls(&table);
    for (_, op, request) in &calls {
        input.push_str(&format!("call:{op}\t{request}\n"));
    }
    let options = table["store"].to_string();
    let lines = run_contract(&exe, scratch.path(), Some(&options), &input);
    let seeds = table["memories"].as_array().unwrap().len();
    assert_eq!(lines.len(), seeds + calls.len(), "{lines:?}");
    let got: Vec<serde_json::Value> = calls
        .iter()
        .zip(&lines[seeds..])
        .map(|((name, _, _), (status, output))| {
            let whole: check::Whole = match *status {
                0 => Ok(serde_json::from_str(output).unwrap()),
                s => Err(code_named(s).unwrap_or_else(|| format!("status {s}: {output}"))),
            };
            check::record(name, &whole)
        })
        .collect();
    check::check_whole(&got, &check::answers()).unwrap_or_else(|e| panic!("{e}"));
}

/// The engine's code whose status is `status` (C's statuses are the codes' numbers).
fn code_named(status: i32) -> Option<String> {
    memloop::ErrorCode::ALL
        .into_iter()
        .find(|c| *c as i32 == status)
        .map(|c| c.name().to_string())
}

/// Runs the contract program `exe` on a store in `scratch` (opened with `options`, or the
/// default model) with `input` on stdin, and returns its lines: each a status and its output.
fn run_contract(
    exe: &Path,
    scratch: &Path,
    options: Option<&str>,
    input: &str,
) -> Vec<(i32, String)> {
    let mut command = Command::new(exe);
    command.arg(scratch.join("store"));
    if let Some(options) = options {
        command.arg(options);
    }
    let mut child = command
        .env("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(|l| {
            let (status, rest) = l.split_once('\t').unwrap();
            (status.parse().unwrap(), rest.to_string())
        })
        .collect()
}
