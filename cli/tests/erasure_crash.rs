//! Erasure and key rotation under `kill -9` (round 4, L7): a real child process on an
//! encrypted store ingests for several users, erases one of them, or rotates the key, and is
//! killed with SIGKILL at a random moment. After each kill the store is opened again:
//!
//! - every acknowledged write is there, unless its user's erasure went through after it;
//! - an erasure is all or nothing: a started one (its rows gone) is completed by the open,
//!   with its user's key destroyed and its receipt in the log; an acknowledged one always;
//! - the receipt log verifies as one chain signed by the store, and each receipt printed by
//!   an acknowledged `erase` is in it byte for byte;
//! - the key file still opens the store after a rotation cut short.
//!
//! CI runs `MEMLOOP_SOAK_ROUNDS` rounds (default 24); `scripts/soak-erasure.sh` runs 1,000.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memloop::{privacy::verify_receipt_chain, Encryption, Memory, MemoryFilter, Options, Scope};
use rand::{Rng, SeedableRng};

const USERS: [&str; 4] = ["ana", "bob", "cy", "dee"];

fn open(store: &Path, key: &Path) -> Memory {
    Memory::open(
        store,
        Options {
            encryption: Some(Encryption::key_file(key)),
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("the store does not open after a kill: {e}"))
}

/// A child `memloop` on the encrypted store, its stdout's whole lines sent as they come.
fn spawn(
    store: &Path,
    key: &Path,
    args: &[&str],
    input: String,
) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut full: Vec<&std::ffi::OsStr> = vec![
        "--store".as_ref(),
        store.as_os_str(),
        "--key-file".as_ref(),
        key.as_os_str(),
        "--dedup-threshold".as_ref(),
        "off".as_ref(),
    ];
    full.extend(args.iter().map(std::ffi::OsStr::new));
    common::spawn_lines(&full, input)
}

#[test]
fn erasures_and_key_rotations_killed_at_random_moments_lose_nothing_and_complete() {
    let rounds: usize = std::env::var("MEMLOOP_SOAK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let dir = tempfile::tempdir().unwrap();
    let (store, key) = (dir.path().join("store"), dir.path().join("store.key"));
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6572_6173);
    // id -> (user, text) of every acknowledged write not erased since.
    let mut acked: HashMap<u64, (String, String)> = HashMap::new();
    let mut receipts_printed: Vec<String> = Vec::new();
    let (mut erasures_completed_at_open, mut erasures_acked, mut rotations_acked) = (0, 0, 0);
    let mut next_text = 0usize;
    let mut writes_acked = 0usize;
    for round in 0..rounds {
        let log_before = if round == 0 {
            0
        } else {
            let m = open(&store, &key);
            let n = m.admin().receipt_log().unwrap().len();
            m.close().unwrap();
            n
        };
        let op = if round < 2 { 0 } else { rng.gen_range(0..4) };
        let erased_user = USERS[rng.gen_range(0..USERS.len())];
        let (args, input): (Vec<&str>, String) = match op {
            // Ingest for every user, one JSON line each, acknowledged by id.
            0 | 1 => {
                let lines: String = (0..16)
                    .map(|i| {
                        next_text += 1;
                        serde_json::json!({
                            "text": format!("note {next_text}: parcel {} went to depot {}", next_text * 7, i),
                            "user": USERS[i % USERS.len()],
                        })
                        .to_string()
                            + "\n"
                    })
                    .collect();
                (vec!["ingest", "-", "--jsonl", "--batch", "2"], lines)
            }
            2 => (vec!["erase", "--user", erased_user], String::new()),
            _ => (vec!["key", "rotate"], String::new()),
        };
        let texts: Vec<(String, String)> = input
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["user"].as_str().unwrap().to_string(),
                    v["text"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let (mut child, rx) = spawn(&store, &key, &args, input);
        // Killed after a random time (the model loads first: 0-1,500 ms covers loading,
        // writing, the erasure's rewrite and key destruction, and finishing).
        let kill_at = Instant::now() + Duration::from_millis(rng.gen_range(0..1_500));
        let mut lines = Vec::new();
        let mut exited = None;
        while Instant::now() < kill_at {
            if let Ok(l) = rx.recv_timeout(Duration::from_millis(2)) {
                lines.push(l);
            }
            if let Some(status) = child.try_wait().unwrap() {
                exited = Some(status);
                break;
            }
        }
        if exited.is_none() {
            child.kill().unwrap();
            exited = Some(child.wait().unwrap());
        }
        while let Ok(l) = rx.recv_timeout(Duration::from_millis(50)) {
            lines.push(l);
        }
        let finished = exited.is_some_and(|s| s.success());
        match op {
            0 | 1 => {
                // One acknowledgement per input line, in order.
                for (l, written) in lines.iter().zip(&texts) {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    acked.insert(v["id"].as_u64().unwrap(), written.clone());
                    writes_acked += 1;
                }
            }
            2 => {
                if finished {
                    erasures_acked += 1;
                    let line = lines.concat();
                    assert!(line.ends_with('\n') && line.contains(erased_user), "{line}");
                    receipts_printed.push(line);
                }
            }
            _ => rotations_acked += usize::from(finished),
        }

        let m = open(&store, &key);
        let log = m.admin().receipt_log().unwrap();
        let chain = verify_receipt_chain(&log)
            .unwrap_or_else(|e| panic!("round {round}: the receipt log: {e}"));
        if let Some(first) = chain.first() {
            assert_eq!(
                Some(&first.public_key),
                m.admin().receipt_public_key().unwrap().as_ref()
            );
        }
        for printed in &receipts_printed {
            assert!(
                log.contains(printed),
                "round {round}: a printed receipt is not in the log"
            );
        }
        if op == 2 {
            let grew = log.len() - log_before;
            assert!(grew <= 1, "round {round}");
            if finished {
                assert_eq!(
                    grew, 1,
                    "round {round}: an acknowledged erasure has no receipt"
                );
            }
            if grew == 1 {
                let receipt = chain.last().unwrap();
                assert_eq!(receipt.user.as_deref(), Some(erased_user));
                erasures_completed_at_open += usize::from(!finished);
                acked.retain(|_, (u, _)| u != erased_user);
                let left = m
                    .advanced()
                    .scan(
                        &MemoryFilter::new()
                            .scope(Scope::user(erased_user))
                            .include_superseded(true),
                        usize::MAX,
                    )
                    .unwrap();
                assert!(left.is_empty(), "round {round}: half an erasure");
            }
        }
        for (id, (user, text)) in &acked {
            let item = m
                .get(memloop::MemoryId::new(*id))
                .unwrap()
                .unwrap_or_else(|| panic!("round {round}: acknowledged id {id} of {user} lost"));
            assert_eq!(&item.text, text, "round {round}: id {id}");
            assert_eq!(item.user.as_deref(), Some(user.as_str()));
        }
        m.close().unwrap();
    }
    eprintln!(
        "{rounds} rounds: {writes_acked} writes acknowledged, {} of them kept (the rest erased since), {erasures_acked} erasures acknowledged, {erasures_completed_at_open} completed at the next open, {rotations_acked} rotations acknowledged",
        acked.len()
    );
    assert!(!acked.is_empty());
}
