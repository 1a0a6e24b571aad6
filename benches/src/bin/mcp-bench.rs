//! `mcp-bench`: what reaching the store through `memloop mcp` costs, per `recall`.
//!
//! ```text
//! cargo build --release -p memloop-cli -p memloop-benches
//! target/release/mcp-bench --memloop target/release/memloop --texts base.txt --queries query.txt
//! ```
//! One store filled with `--n` texts (`memloop ingest`, the real model), then the same queries,
//! one at a time, timed four ways (p50 / p99, one JSON line each):
//! - `direct`: `Memory::recall` in this process, on a copy of the store;
//! - `mcp_serving`: an MCP `tools/call` over stdio to the `memloop mcp` that holds the store;
//! - `socket`: the shared-store socket of that process, spoken directly (what a forwarding
//!   process adds on top of the tool itself);
//! - `mcp_forwarded`: an MCP `tools/call` over stdio to a second `memloop mcp`, which forwards
//!   it through the socket to the first.
//!
//! The MCP client here is a plain JSON-RPC writer (initialize, then `tools/call`), enough to time
//! round trips; the integration tests use the official SDK.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use memloop::{Memory, Options, Query};
use serde_json::{json, Value};

#[derive(Parser, Debug)]
#[command(about = "recall through memloop mcp: in process, over stdio, forwarded")]
struct Args {
    /// The memloop binary (release build).
    #[arg(long)]
    memloop: PathBuf,
    /// Texts to remember, one per line.
    #[arg(long)]
    texts: PathBuf,
    /// Queries, one per line.
    #[arg(long)]
    queries: PathBuf,
    /// Memories in the store.
    #[arg(long, default_value_t = 10_000)]
    n: usize,
    /// Recalls timed per way.
    #[arg(long, default_value_t = 1_000)]
    calls: usize,
    /// Hits per recall.
    #[arg(long, default_value_t = 5)]
    k: usize,
}

/// A `memloop mcp` process and a line-oriented JSON-RPC client of it.
struct McpProcess {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl McpProcess {
    fn start(memloop: &Path, store: &Path) -> Result<McpProcess> {
        let mut child = Command::new(memloop)
            .args(["--store".as_ref(), store.as_os_str(), "mcp".as_ref()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("start memloop mcp")?;
        let input = child.stdin.take().context("stdin")?;
        let output = BufReader::new(child.stdout.take().context("stdout")?);
        let mut p = McpProcess {
            child,
            input,
            output,
            next_id: 1,
        };
        p.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "mcp-bench", "version": "0"}}),
        )?;
        p.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(p)
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.input.write_all(&line)?;
        self.input.flush()?;
        Ok(())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            if self.output.read_line(&mut line)? == 0 {
                bail!("memloop mcp closed its output");
            }
            let message: Value = serde_json::from_str(&line)?;
            if message["id"] == json!(id) {
                if let Some(e) = message.get("error") {
                    bail!("{method}: {e}");
                }
                return Ok(message["result"].clone());
            }
        }
    }

    fn recall(&mut self, query: &str, k: usize) -> Result<()> {
        let r = self.request(
            "tools/call",
            json!({"name": "recall", "arguments": {"query": query, "k": k}}),
        )?;
        if r["isError"] == json!(true) || r["structuredContent"]["hits"].as_array().is_none() {
            bail!("recall failed: {r}");
        }
        Ok(())
    }
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The shared-store socket spoken directly (one JSON line each way).
struct Socket {
    out: UnixStream,
    input: BufReader<UnixStream>,
}

impl Socket {
    fn connect(store: &Path) -> Result<Socket> {
        let out = UnixStream::connect(store.join("memloop.sock")).context("connect")?;
        let input = BufReader::new(out.try_clone()?);
        let mut s = Socket { out, input };
        s.call("hello", json!(null))?;
        Ok(s)
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value> {
        let mut line = serde_json::to_vec(&json!({"v": 1, "tool": tool, "arguments": arguments}))?;
        line.push(b'\n');
        self.out.write_all(&line)?;
        let mut answer = String::new();
        self.input.read_line(&mut answer)?;
        let v: Value = serde_json::from_str(&answer)?;
        if v.get("ok").is_none() {
            bail!("{tool}: {v}");
        }
        Ok(v)
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn time(
    queries: &[String],
    calls: usize,
    mut f: impl FnMut(&str) -> Result<()>,
) -> Result<Vec<Duration>> {
    for q in queries.iter().cycle().take(50) {
        f(q)?; // warm up
    }
    let mut out = Vec::with_capacity(calls);
    for q in queries.iter().cycle().skip(50).take(calls) {
        let t = Instant::now();
        f(q)?;
        out.push(t.elapsed());
    }
    out.sort();
    Ok(out)
}

fn lines(path: &Path, n: usize) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .map(str::to_string)
        .collect())
}

fn main() -> Result<()> {
    let args = Args::parse();
    let texts = lines(&args.texts, args.n)?;
    let queries = lines(&args.queries, args.calls.max(100))?;
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("s");
    let jsonl = dir.path().join("texts.jsonl");
    let mut f = std::fs::File::create(&jsonl)?;
    for t in &texts {
        writeln!(f, "{}", json!({ "text": t }))?;
    }
    drop(f);
    let status = Command::new(&args.memloop)
        .args([
            "--store".as_ref(),
            store.as_os_str(),
            "ingest".as_ref(),
            jsonl.as_os_str(),
        ])
        .stdout(Stdio::null())
        .status()?;
    if !status.success() {
        bail!("memloop ingest failed");
    }
    // The direct figure runs on a copy: the original is held by the serving process.
    let copy = dir.path().join("copy");
    memloop_benches::copy_store(&store, &copy)?;

    let memory = Memory::open(&copy, Options::default())?;
    let direct = time(&queries, args.calls, |q| {
        memory.recall(&Query::new(q).k(args.k))?;
        Ok(())
    })?;
    memory.close()?;

    let mut serving = McpProcess::start(&args.memloop, &store)?;
    let mut forwarding = McpProcess::start(&args.memloop, &store)?;
    let mut socket = Socket::connect(&store)?;
    let mcp_serving = time(&queries, args.calls, |q| serving.recall(q, args.k))?;
    let socket_t = time(&queries, args.calls, |q| {
        socket.call("recall", json!({"query": q, "k": args.k}))?;
        Ok(())
    })?;
    let mcp_forwarded = time(&queries, args.calls, |q| forwarding.recall(q, args.k))?;

    let p50 = |v: &[Duration]| pct(v, 0.5);
    for (way, v) in [
        ("direct", &direct),
        ("mcp_serving", &mcp_serving),
        ("socket", &socket_t),
        ("mcp_forwarded", &mcp_forwarded),
    ] {
        println!(
            "{}",
            json!({"figure": "recall_round_trip", "way": way, "memories": texts.len(), "k": args.k,
                   "calls": args.calls, "p50_ms": p50(v), "p99_ms": pct(v, 0.99)})
        );
    }
    println!(
        "{}",
        json!({"figure": "forwarding_adds", "p50_ms": p50(&mcp_forwarded) - p50(&mcp_serving),
               "mcp_over_direct_p50_ms": p50(&mcp_serving) - p50(&direct),
               "socket_over_direct_p50_ms": p50(&socket_t) - p50(&direct)})
    );
    Ok(())
}
