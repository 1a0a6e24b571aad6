//! The cross-door contract (`contract/cases.json`) through the real binary and the real
//! default model: each request written as the command's flags, `--json` read back, an error
//! read from the exit status (3: invalid input, as for every engine error of that category).
//! The Rust API, MCP, C and Python run the same table.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[path = "../../contract/check.rs"]
mod check;
use check::{
    answers, check, check_whole, ids_of, record, table, whole_answer_calls, Answer, Whole,
};

/// `memloop --store STORE ARGS…`: the exit status and stdout.
fn run(store: &Path, args: &[String]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memloop"))
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The flags that say what a request's field says, or None for a field this door cannot
/// write (a context mode other than its `--documents` switch).
fn flags(request: &Value) -> Option<Vec<String>> {
    // The positional argument: a recall's or context's query, a memory's text.
    let first = request.get("query").or_else(|| request.get("text"))?;
    let mut out = vec![first.as_str()?.to_string()];
    for (key, value) in request.as_object()? {
        let flag = format!("--{}", key.replace('_', "-"));
        match (key.as_str(), value) {
            ("query" | "text", _) => {}
            ("kinds" | "tags", Value::Array(values)) => {
                for v in values {
                    out.extend([format!("--{}", &key[..key.len() - 1]), v.as_str()?.into()]);
                }
            }
            ("history", Value::Bool(true)) => out.push(flag),
            ("mode", Value::String(m)) if m == "documents" => out.push("--documents".into()),
            ("mode", Value::String(m)) if m == "memories" => {}
            ("mode", _) => return None,
            (_, Value::String(s)) => out.extend([flag, s.clone()]),
            (_, Value::Number(n)) => out.extend([flag, n.to_string()]),
            _ => return None,
        }
    }
    Some(out)
}

/// An open request's fields as the global flags of the same names, or None for a field whose
/// value a flag cannot write (only text is).
fn open_flags(request: &Value) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for (key, value) in request.as_object()? {
        out.extend([
            format!("--{}", key.replace('_', "-")),
            value.as_str()?.into(),
        ]);
    }
    Some(out)
}

#[test]
fn the_command_line_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let table = table();
    for (i, seed) in table["memories"].as_array().unwrap().iter().enumerate() {
        let mut args = vec![
            "remember".to_string(),
            seed["text"].as_str().unwrap().into(),
        ];
        for key in [
            "kind",
            "namespace",
            "user",
            "agent",
            "valid_from",
            "valid_until",
            "head",
            "relation",
            "tail",
        ] {
            if let Some(v) = seed[key].as_str() {
                args.extend([format!("--{}", key.replace('_', "-")), v.into()]);
            }
        }
        for tag in seed["tags"].as_array().into_iter().flatten() {
            args.extend(["--tag".into(), tag.as_str().unwrap().into()]);
        }
        let (code, out, err) = run(&store, &args);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), format!("{}", i + 1), "seed {i}");
    }
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in table["cases"].as_array().unwrap() {
        let op = case["op"].as_str().unwrap();
        let (target, args) = if op == "open" {
            // The options as the global flags of `init`, which creates a fresh store.
            let Some(mut args) = open_flags(&case["request"]) else {
                continue;
            };
            args.extend(["init".into(), "--json".into()]);
            (dir.path().join("opened"), args)
        } else {
            let Some(mut args) = flags(&case["request"]) else {
                continue;
            };
            args.insert(0, op.to_string());
            args.push("--json".into());
            (store.clone(), args)
        };
        let (code, out, err) = run(&target, &args);
        ran += 1;
        let got: Answer = if code == 0 {
            let v: Value =
                serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
            Ok(match op {
                "recall" => ids_of(&v["hits"]),
                "open" => Vec::new(),
                "remember" => vec![v["id"].as_u64().unwrap()],
                _ => ids_of(&v["blocks"]),
            })
        } else {
            // The exit status is the error's category: 3 is invalid input; 9 the model's (the
            // table's only error of that category is `embed`).
            Err(if code == 3 {
                "invalid_input".into()
            } else if code == 9 {
                "embed".into()
            } else {
                format!("exit {code}: {err}")
            })
        };
        if let Err(e) = check(case, &got) {
            failures.push(format!("{e} ({args:?})"));
        }
    }
    assert!(ran >= 20, "only {ran} cases could be written as flags");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The global flags of the table's `store` options: the test embedder and a manual clock.
fn store_flags(table: &Value) -> Vec<String> {
    let store = &table["store"];
    assert_eq!(store["clock"], "manual");
    vec![
        "--hashing-embedder".into(),
        store["hashing_embedder"].to_string(),
        "--manual-clock".into(),
        store["start_ms"].to_string(),
    ]
}

/// `memloop call OP REQUEST` on `store`: its stdout, and the whole answer it gives.
fn call(store: &Path, flags: &[String], op: &str, request: &Value) -> (String, Whole) {
    let mut args = flags.to_vec();
    args.extend(["call".into(), op.into(), request.to_string()]);
    let (code, out, err) = run(store, &args);
    let whole = if code == 0 {
        Ok(serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}")))
    } else {
        // The message ends with the engine's code where a tool ran ("(error code x)"); an
        // engine error raised in this process carries its category as the exit status.
        let named = err
            .rsplit_once("(error code ")
            .and_then(|(_, rest)| rest.split(')').next())
            .map(str::to_string);
        Err(named.unwrap_or(match code {
            3 => "invalid_input".into(),
            4 => "not_found".into(),
            _ => format!("exit {code}: {err}"),
        }))
    };
    (out, whole)
}

/// Seeds `store` through `memloop call remember` and runs every whole-answer call: the
/// printed bytes and the records.
fn whole_answers(store: &Path, table: &Value) -> (Vec<String>, Vec<Value>) {
    let flags = store_flags(table);
    for (i, seed) in table["memories"].as_array().unwrap().iter().enumerate() {
        let (_, done) = call(store, &flags, "remember", seed);
        assert_eq!(done.unwrap()["id"], i as u64 + 1, "seed {i}");
    }
    whole_answer_calls(table)
        .iter()
        .map(|(name, op, request)| {
            let (out, whole) = call(store, &flags, op, request);
            (out, record(name, &whole))
        })
        .unzip()
}

#[test]
fn the_command_line_gives_the_registrys_whole_answers_direct_and_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let table = table();
    let direct_store = dir.path().join("direct");
    let (direct_bytes, direct) = whole_answers(&direct_store, &table);
    check_whole(&direct, &answers()).unwrap_or_else(|e| panic!("direct: {e}"));

    // The same calls while an agent's `memloop mcp` holds another store: each command is
    // forwarded to it and must print the same bytes.
    let served = dir.path().join("served");
    let mut server_args: Vec<std::ffi::OsString> = vec!["--store".into(), served.clone().into()];
    server_args.extend(store_flags(&table).into_iter().map(Into::into));
    server_args.push("mcp".into());
    // Its stdin stays open (an MCP client that says nothing) until the test ends.
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_memloop"))
        .args(&server_args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // It says on stderr when it serves (a socket file on Unix, a named pipe on Windows);
    // the rest of its stderr is drained so it never blocks on it.
    let (said, serving) = std::sync::mpsc::channel();
    let stderr = server.stderr.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = said.send(line);
        }
    });
    loop {
        let line = serving
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the server never served");
        if line.contains("(serving it)") {
            break;
        }
    }
    let (forwarded_bytes, forwarded) = whole_answers(&served, &table);
    let _ = server.kill();
    let _ = server.wait();
    check_whole(&forwarded, &answers()).unwrap_or_else(|e| panic!("forwarded: {e}"));
    for (i, (d, f)) in direct_bytes.iter().zip(&forwarded_bytes).enumerate() {
        assert_eq!(d, f, "call {i}: direct and forwarded print other bytes");
    }
}
