//! `soak`: `kill -9` against a mixed workload, checking every acknowledged write after each kill.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin soak -- [--rounds 1000] [--seed 1] [--dir DIR]
//! ```
//! Each round starts a child process (this binary, `--child`) on the same store. The child runs
//! remember, update, forget, sweep (a capacity bound evicts), checkpoint and import in a random
//! mix and prints a line before each operation (`begin`) and after it returned (`ack`, with
//! what it changed). The parent kills it with SIGKILL after a random number of
//! acknowledgements and a few milliseconds more, reopens the store and checks that every
//! acknowledged remember, update and import is there with its text, every acknowledged forget
//! and eviction is gone, and `check()` finds the store sound. The operation in flight at the
//! kill may or may not have happened; its memories are taken as the store has them. A model-free
//! embedder keeps rounds fast (the subject is durability, not meaning). `--encrypted` runs the
//! same rounds on an encrypted store.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use clap::Parser;
use memloop::{
    requests::Update, Clock, HashingEmbedder, Memory, MemoryFilter, MemoryId, NewMemory, Options,
};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

#[derive(Parser, Debug)]
#[command(about = "kill -9 soak of a mixed workload, every acknowledged write checked")]
struct Args {
    /// Kill rounds.
    #[arg(long, default_value_t = 1000)]
    rounds: usize,
    /// Random seed (kill points, operations).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Store directory (default: a temporary one).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Encrypt the store (and the import file) with a key file beside it: the same checks
    /// on an encrypted store.
    #[arg(long)]
    encrypted: bool,
    /// Run as the workload child on `--dir`.
    #[arg(long, hide = true)]
    child: bool,
}

fn options() -> Options {
    let mut o = Options::with_embedder(Arc::new(HashingEmbedder::new(64)));
    o.clock = Clock::manual(1_700_000_000_000);
    o.forgetting.capacity = Some(300);
    o.dedup_threshold = None;
    // Set by the parent for itself and its children with --encrypted.
    if let Some(key) = std::env::var_os("MEMLOOP_SOAK_KEY_FILE") {
        o.encryption = Some(memloop::Encryption::key_file(PathBuf::from(key)));
    }
    o
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.child {
        return child(
            args.dir.as_deref().context("--child needs --dir")?,
            args.seed,
        );
    }
    let scratch = tempfile::tempdir()?;
    if args.encrypted {
        // Read by `options()` here and in every child (which inherit the environment).
        std::env::set_var("MEMLOOP_SOAK_KEY_FILE", scratch.path().join("soak.key"));
    }
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| scratch.path().join("store"));
    let import = scratch.path().join("import.mlx");
    make_import_file(&scratch.path().join("src"), &import)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    // id -> text of every memory the model expects current; ids expected gone.
    let mut current: BTreeMap<MemoryId, String> = BTreeMap::new();
    let mut gone: std::collections::BTreeSet<MemoryId> = std::collections::BTreeSet::new();
    let (mut acks, mut mid_op, started) = (0usize, 0usize, Instant::now());
    for round in 0..args.rounds {
        let mut child = Command::new(std::env::current_exe()?)
            .args([
                "--child",
                "--seed",
                &(args.seed * 1_000_003 + round as u64).to_string(),
            ])
            .arg("--dir")
            .arg(&dir)
            .env("MEMLOOP_SOAK_IMPORT", &import)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let (tx, rx) = mpsc::channel::<Value>();
        let stdout = child.stdout.take().context("child stdout")?;
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str(&line) else {
                    break;
                };
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let kill_after = rng.gen_range(0..40usize);
        let slack = Duration::from_micros(rng.gen_range(0..20_000));
        let mut lines = Vec::new();
        let give_up = Instant::now() + Duration::from_secs(60);
        while lines
            .iter()
            .filter(|v: &&Value| v["ack"].is_string())
            .count()
            < kill_after
            && Instant::now() < give_up
        {
            if let Ok(v) = rx.recv_timeout(Duration::from_millis(2)) {
                lines.push(v);
            }
        }
        let until = Instant::now() + slack;
        while Instant::now() < until {
            if let Ok(v) = rx.recv_timeout(Duration::from_micros(200)) {
                lines.push(v);
            }
        }
        child.kill()?; // SIGKILL
        child.wait()?;
        while let Ok(v) = rx.recv_timeout(Duration::from_millis(20)) {
            lines.push(v);
        }
        // Apply what was acknowledged; note what was in flight.
        let mut in_flight: Option<&Value> = None;
        for v in &lines {
            if v["begin"].is_string() {
                in_flight = Some(v);
                continue;
            }
            in_flight = None;
            acks += 1;
            for id in v["removed"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
            {
                let id = MemoryId::new(id);
                current.remove(&id);
                gone.insert(id);
            }
            // An import may give a freed id back (it keeps foreign ids when they are free).
            for (id, text) in v["added"].as_array().into_iter().flatten().filter_map(pair) {
                gone.remove(&id);
                current.insert(id, text);
            }
        }
        mid_op += usize::from(in_flight.is_some());
        verify(&dir, round, &mut current, &mut gone, in_flight)?;
        if (round + 1) % 100 == 0 {
            eprintln!(
                "soak: {} rounds, {acks} acknowledged operations, {} memories, {:.0} s",
                round + 1,
                current.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    println!(
        "{}",
        json!({"rounds": args.rounds, "acknowledged_operations": acks, "killed_mid_operation": mid_op,
               "memories_checked_last": current.len(), "forgotten_checked": gone.len(),
               "seconds": started.elapsed().as_secs_f64(), "lost": 0})
    );
    Ok(())
}

fn pair(v: &Value) -> Option<(MemoryId, String)> {
    Some((MemoryId::new(v[0].as_u64()?), v[1].as_str()?.to_string()))
}

/// Every acknowledged write is there with its text and every acknowledged removal gone. A
/// memory may be missing only if the operation in flight at the kill named it (an update or a
/// forget) or the forgetting log records that a sweep removed it; a removed one may be back only
/// through an import in flight. Then the model takes the store's state (what the operation in
/// flight added, what sweeps removed).
fn verify(
    dir: &Path,
    round: usize,
    current: &mut BTreeMap<MemoryId, String>,
    gone: &mut std::collections::BTreeSet<MemoryId>,
    in_flight: Option<&Value>,
) -> Result<()> {
    let m = Memory::open(dir, options()).with_context(|| format!("round {round}: reopen"))?;
    let live: BTreeMap<MemoryId, String> = m
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)?
        .into_iter()
        .map(|i| (i.id, i.text))
        .collect();
    let swept: std::collections::HashSet<MemoryId> = m
        .admin()
        .forgotten(i64::MIN)?
        .iter()
        .map(|e| e.id)
        .collect();
    let target = in_flight.and_then(|v| v["target"].as_u64());
    let importing = in_flight.is_some_and(|v| v["begin"] == "import");
    for (id, text) in current.iter() {
        match live.get(id) {
            Some(t) if t == text => {}
            Some(t) => bail!("round {round}: memory {id} says {t:?}, acknowledged {text:?}"),
            None if target == Some(id.get()) || swept.contains(id) => {}
            None => bail!("round {round}: acknowledged memory {id} ({text:?}) lost"),
        }
    }
    for id in gone.iter() {
        if live.contains_key(id) && !importing {
            bail!("round {round}: memory {id} was acknowledged gone but is there");
        }
    }
    let report = m.admin().check()?;
    ensure!(report.is_sound(), "round {round}: {report:?}");
    gone.retain(|id| !live.contains_key(id));
    *current = live;
    Ok(())
}

/// The workload: prints `{"begin": op}` before and `{"ack": op, "added": [[id, text]…],
/// "removed": [id…]}` after each operation, until killed (or 10,000 operations).
fn child(dir: &Path, seed: u64) -> Result<()> {
    let m = Memory::open(dir, options())?;
    // The clock goes on from the newest time the store has seen (each child starts one).
    let newest = m
        .advanced()
        .scan(&MemoryFilter::new().include_superseded(true), usize::MAX)?
        .iter()
        .map(|i| i.accessed.max(i.updated))
        .max();
    if let Some(t) = newest {
        m.clock()
            .set(t.max(m.clock().now()))
            .map_err(anyhow::Error::msg)?;
    }
    let import = PathBuf::from(std::env::var_os("MEMLOOP_SOAK_IMPORT").context("import file")?);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut out = std::io::stdout().lock();
    let mut ids: Vec<MemoryId> = m
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)?
        .iter()
        .map(|i| i.id)
        .collect();
    for n in 0..10_000u64 {
        let op = match rng.gen_range(0..100) {
            0..=49 => "remember",
            50..=64 => "update",
            65..=79 => "forget",
            80..=87 => "sweep",
            88..=95 => "checkpoint",
            _ => "import",
        };
        // The memory an update or forget will change, named before it starts.
        let pick = (!ids.is_empty()).then(|| rng.gen_range(0..ids.len()));
        let target = match op {
            "update" | "forget" => pick.map(|at| ids[at]),
            _ => None,
        };
        writeln!(out, "{}", json!({ "begin": op, "target": target }))?;
        out.flush()?;
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        match op {
            "remember" => {
                let texts: Vec<String> = (0..rng.gen_range(1..4))
                    .map(|i| {
                        format!(
                            "soak memory {seed}-{n}-{i} about harbor {}",
                            rng.gen_range(0..1000)
                        )
                    })
                    .collect();
                let got = m.remember_batch(texts.iter().map(NewMemory::new).collect())?;
                ids.extend(&got);
                added.extend(got.into_iter().zip(texts));
            }
            "update" if pick.is_some() => {
                let at = pick.unwrap_or_default();
                let text = format!("soak update {seed}-{n} of memory {}", ids[at]);
                let new = m.update(
                    ids[at],
                    Update {
                        text: Some(text.clone()),
                        ..Default::default()
                    },
                )?;
                removed.push(ids[at]); // superseded: no longer current
                ids[at] = new;
                added.push((new, text));
            }
            "forget" if pick.is_some() => {
                let id = ids.swap_remove(pick.unwrap_or_default());
                m.forget(id)?;
                removed.push(id);
            }
            "sweep" => {
                // Time passes, so memories decay; the capacity bound evicts past 300 anyway.
                m.clock()
                    .advance(rng.gen_range(0..3 * 86_400_000))
                    .map_err(anyhow::Error::msg)?;
                m.admin().sweep()?;
            }
            "checkpoint" => m.admin().checkpoint()?,
            "import" => {
                let before: std::collections::HashSet<MemoryId> = ids.iter().copied().collect();
                m.transfer().import(&import)?;
                for item in m.advanced().scan(&MemoryFilter::new(), usize::MAX)? {
                    if !before.contains(&item.id) && item.text.starts_with("imported") {
                        ids.push(item.id);
                        added.push((item.id, item.text));
                    }
                }
            }
            _ => {}
        }
        // Whatever a sweep (explicit, or the one after each write) evicted past the capacity.
        let live: std::collections::HashSet<MemoryId> = m
            .advanced()
            .scan(&MemoryFilter::new(), usize::MAX)?
            .iter()
            .map(|i| i.id)
            .collect();
        ids.retain(|id| {
            let kept = live.contains(id);
            if !kept {
                removed.push(*id);
            }
            kept
        });
        added.retain(|(id, _)| live.contains(id));
        writeln!(
            out,
            "{}",
            json!({ "ack": op, "added": added, "removed": removed })
        )?;
        out.flush()?;
    }
    Ok(())
}

/// An export of 20 memories (another store, same embedder) for the import operation.
fn make_import_file(dir: &Path, file: &Path) -> Result<()> {
    let m = Memory::open(dir, options())?;
    m.remember_batch(
        (0..20)
            .map(|i| NewMemory::new(format!("imported soak note {i} about meadow {}", i * 7)))
            .collect(),
    )?;
    m.transfer().export(file, &MemoryFilter::new())?;
    Ok(())
}
