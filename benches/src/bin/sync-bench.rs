//! `sync-bench`: sync between two stores on this machine through a real S3-compatible server
//! (`s3s-fs` on loopback: scripts/test-sync.sh builds it into target/tools/): the first sync
//! of a store of `--memories` memories (device A's push, device B's pull), then a delta of
//! `--delta` changes (half new memories, a third updates, the rest forgotten), time and bytes
//! of each, how many rows the delta moved, and (on Linux with glibc) what the first pull held
//! in the process's heap: its peak (`RssAnon` sampled every 2 ms, above the live heap before
//! it), what stays live after it (the store's own caches: redb keeps the pages it wrote, up to
//! its cache size), and the difference, what the pull held only while it ran (the rows it read
//! and had not applied yet).
//!
//! ```text
//! cargo build --release --locked -p memloop-benches --bin sync-bench
//! bash scripts/test-sync.sh   # builds target/tools/bin/s3s-fs (or give --server)
//! target/release/sync-bench --memories 100000 --delta 100 --json
//! ```
//! Model-free (the 384-d hashing embedder, the default model's dimension): vectors travel
//! with their memories, so what a sync costs does not depend on the model. Both stores are
//! encrypted (sync needs it); B holds A's key ring, carried by `export_ring`/`import_ring`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use memloop::requests::{SyncRequest, Update};
use memloop::{Encryption, HashingEmbedder, Memory, MemoryFilter, MemoryId, NewMemory, Options};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "sync through an S3-compatible server: first sync and a delta, time and bytes")]
struct Args {
    /// Memories in device A's store before the first sync.
    #[arg(long, default_value_t = 100_000)]
    memories: usize,
    /// Changes made on A after the first sync.
    #[arg(long, default_value_t = 100)]
    delta: usize,
    /// The s3s-fs binary (default: target/tools/bin/s3s-fs).
    #[arg(long)]
    server: Option<PathBuf>,
    /// Print one JSON line.
    #[arg(long)]
    json: bool,
}

fn sentence(i: usize) -> String {
    const NOUNS: [&str; 12] = [
        "falcon", "compiler", "glacier", "violin", "harbor", "orchid", "reactor", "canyon",
        "lantern", "meadow", "quartz", "tundra",
    ];
    format!(
        "the {} met the {} near station {i} with code k{} for user {}",
        NOUNS[i % 12],
        NOUNS[(i / 12 + 5) % 12],
        (i * 7919) % 10007,
        i % 50
    )
}

fn options(key: &Path) -> Options {
    Options {
        encryption: Some(Encryption::key_file(key)),
        ..Options::with_embedder(Arc::new(HashingEmbedder::new(384)))
    }
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("s3");
    std::fs::create_dir_all(data.join("bench"))?;
    let bin = args
        .server
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/tools/bin/s3s-fs"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let _server = Server(
        Command::new(&bin)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--access-key", "bench", "--secret-key", "bench-secret"])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("start {} (scripts/test-sync.sh builds it)", bin.display()))?,
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            bail!("the S3 server did not start");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::env::set_var("AWS_ACCESS_KEY_ID", "bench");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "bench-secret");
    let remote = SyncRequest {
        remote: "s3://bench/memloop".into(),
        endpoint: Some(format!("http://127.0.0.1:{port}")),
        timeout_secs: Some(600),
        compact: false,
    };
    let (ka, kb) = (dir.path().join("a.key"), dir.path().join("b.key"));
    let a = Memory::open(dir.path().join("a"), options(&ka))?;
    // The same memories written here, for scale: what the store's own writes hold in the heap
    // (the index's nodes until a checkpoint, redb's pages).
    let sampler = PeakSampler::start();
    for chunk in (0..args.memories).collect::<Vec<_>>().chunks(10_000) {
        a.remember_batch(chunk.iter().map(|&i| NewMemory::new(sentence(i))).collect())?;
    }
    let ingest_heap = sampler.stop();
    Encryption::key_file(&kb)
        .import_ring(&Encryption::key_file(&ka).export_ring("bench")?, "bench")?;
    let b = Memory::open(dir.path().join("b"), options(&kb))?;
    let timed = |m: &Memory| -> Result<(memloop::answers::Synced, f64)> {
        let t = Instant::now();
        let r = m.transfer().sync(&remote)?;
        Ok((r, t.elapsed().as_secs_f64()))
    };
    let (push, push_s) = timed(&a)?;
    let sampler = PeakSampler::start();
    let (pull, pull_s) = timed(&b)?;
    let heap = sampler.stop();
    if pull.pulled != args.memories {
        bail!("B pulled {} of {}", pull.pulled, args.memories);
    }
    // The delta: new memories, updates (new versions), forgotten ones.
    let ids: Vec<MemoryId> = a
        .advanced()
        .scan(&MemoryFilter::new(), args.delta)?
        .into_iter()
        .map(|i| i.id)
        .collect();
    let new = args.delta / 2;
    let updates = args.delta / 3;
    for i in 0..new {
        a.remember(NewMemory::new(format!(
            "a new memory {i} after the first sync"
        )))?;
    }
    for (n, &id) in ids.iter().take(updates).enumerate() {
        a.update(
            id,
            Update {
                text: Some(format!("station note {n} rewritten after the first sync")),
                ..Update::default()
            },
        )?;
    }
    for &id in ids.iter().skip(updates).take(args.delta - new - updates) {
        a.forget(id)?;
    }
    let (dpush, dpush_s) = timed(&a)?;
    let (dpull, dpull_s) = timed(&b)?;
    let count = |m: &Memory| {
        m.advanced()
            .scan(&MemoryFilter::new(), usize::MAX)
            .map(|v| v.len())
    };
    let (na, nb) = (count(&a)?, count(&b)?);
    if na != nb {
        bail!("the stores differ after the delta: {na} against {nb}");
    }
    let out = json!({
        "memories": args.memories,
        "ingest": {"heap_peak_bytes": ingest_heap.map(|h| h.peak), "heap_retained_bytes": ingest_heap.map(|h| h.retained)},
        "first": {"push_s": push_s, "push_rows": push.pushed, "push_bytes": push.pushed_bytes, "push_segments": push.pushed_segments,
                  "pull_s": pull_s, "pull_rows": pull.pulled, "pull_bytes": pull.pulled_bytes,
                  "pull_heap_peak_bytes": heap.map(|h| h.peak),
                  "pull_heap_retained_bytes": heap.map(|h| h.retained),
                  "pull_heap_transient_bytes": heap.map(|h| h.peak.saturating_sub(h.retained))},
        "delta": {"changes": args.delta, "push_s": dpush_s, "push_rows": dpush.pushed, "push_bytes": dpush.pushed_bytes,
                  "pull_s": dpull_s, "pull_rows": dpull.pulled, "pull_bytes": dpull.pulled_bytes},
        "current_memories_each": na,
    });
    if args.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}

/// A field of `/proc/self/status` in KiB (`RssAnon`); None where there is none.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The process's live anonymous memory in KiB: its heap once freed memory is handed back.
fn live_anon_kib() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and only returns free heap pages to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    status_kib("RssAnon")
}

/// What a step held in the heap: its peak and what stayed live after it, in bytes above the
/// live heap before it.
#[derive(Clone, Copy)]
struct Heap {
    peak: u64,
    retained: u64,
}

/// The peak of the process's anonymous resident memory above the live heap when started,
/// sampled by a thread of its own.
struct PeakSampler {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Option<(u64, u64)>>,
}

impl PeakSampler {
    fn start() -> PeakSampler {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let base = live_anon_kib();
        let thread = std::thread::spawn(move || {
            let base = base?;
            let mut peak = base;
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(status_kib("RssAnon")?);
                std::thread::sleep(Duration::from_millis(2));
            }
            Some((base, peak.max(status_kib("RssAnon")?)))
        });
        PeakSampler { stop, thread }
    }

    /// The step's heap; None where it cannot be read (not Linux).
    fn stop(self) -> Option<Heap> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (base, peak) = self.thread.join().ok().flatten()?;
        let live = live_anon_kib()?;
        Some(Heap {
            peak: peak.saturating_sub(base) * 1024,
            retained: live.saturating_sub(base) * 1024,
        })
    }
}
