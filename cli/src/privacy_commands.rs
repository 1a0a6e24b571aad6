//! `memloop erase`, `memloop receipt verify` and `memloop key rotate|export|import`: erasure
//! with a signed receipt, checking one, replacing the key that unlocks an encrypted store, and
//! carrying its key ring to another device.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use memloop::{Durability, Encryption};

use crate::scope_args::ScopeArgs;
use crate::store_args::StoreArgs;

/// `memloop erase`.
#[derive(Args, Debug)]
pub struct EraseArgs {
    /// Whose memories (a whole user's, in an encrypted store, also destroys its key).
    #[command(flatten)]
    scope: ScopeArgs,
}

/// Erases a scope and prints its signed receipt (one JSON line) on stdout.
pub fn erase(store: &StoreArgs, a: &EraseArgs) -> Result<()> {
    let scope = a.scope.scope();
    if scope.is_empty() {
        bail!("name what to erase: --user, --agent and/or --session");
    }
    let memory = store.open_existing(Durability::Synced)?;
    let erased = memory.scoped(&scope).erase();
    crate::store_args::close(memory);
    let erased = erased?;
    eprintln!(
        "memloop: erased {} memories of {scope} ({} forgetting-log events){}",
        erased.memories,
        erased.log_events,
        match &erased.receipt.destroyed_key {
            Some(key) => format!("; destroyed data key {key}"),
            None => String::new(),
        }
    );
    print!("{}", erased.receipt.to_line());
    Ok(())
}

/// `memloop receipt`.
#[derive(Args, Debug)]
pub struct ReceiptArgs {
    #[command(subcommand)]
    command: ReceiptCommand,
}

#[derive(Subcommand, Debug)]
enum ReceiptCommand {
    /// Check an erasure receipt: its bytes and its Ed25519 signature (exit status 1 when it
    /// does not verify). With --store, also that this store signed it.
    /// With --chain instead of a file: check the store's whole receipt log (every receipt
    /// verifies, all signed by the store's key, each chained to the one before).
    Verify {
        /// The receipt file (`memloop erase` prints it).
        #[arg(required_unless_present = "chain")]
        file: Option<PathBuf>,
        /// Check the store's receipt log instead of one file (needs --store).
        #[arg(long, conflicts_with = "file")]
        chain: bool,
        /// Print the receipt as JSON when it verifies.
        #[arg(long)]
        json: bool,
    },
    /// Print every receipt the store logged, oldest first, each exactly as signed (one JSON
    /// line): a receipt whose printout was lost, or that an erasure completed at open made.
    List,
}

/// Runs `memloop receipt …`.
pub fn receipt(store: &StoreArgs, a: &ReceiptArgs) -> Result<ExitCode> {
    let (file, json) = match &a.command {
        ReceiptCommand::List => {
            let memory = store.open_existing(Durability::Synced)?;
            let log = memory.admin().receipt_log();
            crate::store_args::close(memory);
            print!("{}", log?.concat());
            return Ok(ExitCode::SUCCESS);
        }
        ReceiptCommand::Verify {
            chain: true, json, ..
        } => return verify_chain(store, *json),
        ReceiptCommand::Verify {
            file: Some(file),
            json,
            ..
        } => (file, json),
        ReceiptCommand::Verify { file: None, .. } => {
            bail!("name a receipt file, or pass --chain to check the store's log")
        }
    };
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let receipt = match memloop::privacy::verify_receipt(&bytes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("memloop: {}: does not verify: {e}", file.display());
            return Ok(ExitCode::from(1));
        }
    };
    if store.store.is_some() {
        let memory = store.open_existing(Durability::Synced)?;
        let key = memory.admin().receipt_public_key();
        crate::store_args::close(memory);
        if key?.as_deref() != Some(receipt.public_key.as_str()) {
            eprintln!(
                "memloop: {}: signed by another key than this store's",
                file.display()
            );
            return Ok(ExitCode::from(1));
        }
    }
    if *json {
        println!("{}", serde_json::to_value(&receipt)?);
    } else {
        println!(
            "valid: erased {} memories of {} at {} ms; key {}; signed by {}",
            receipt.counts.get("items").copied().unwrap_or(0),
            [
                ("user", &receipt.user),
                ("agent", &receipt.agent),
                ("session", &receipt.session)
            ]
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
            .collect::<Vec<_>>()
            .join(", "),
            receipt.at,
            receipt
                .destroyed_key
                .as_deref()
                .unwrap_or("none (overwritten)"),
            receipt.public_key
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `memloop receipt verify --chain`: the store's whole log, against the store's own key.
fn verify_chain(store: &StoreArgs, json: bool) -> Result<ExitCode> {
    if store.store.is_none() {
        bail!("--chain checks a store's receipt log: pass --store");
    }
    let memory = store.open_existing(Durability::Synced)?;
    let log = memory.admin().receipt_log();
    let key = memory.admin().receipt_public_key();
    crate::store_args::close(memory);
    let (log, key) = (log?, key?);
    let receipts = match memloop::privacy::verify_receipt_chain(&log) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("memloop: the receipt log does not verify: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(first) = receipts.first() {
        if key.as_deref() != Some(first.public_key.as_str()) {
            eprintln!("memloop: the receipt log is signed by another key than this store's");
            return Ok(ExitCode::from(1));
        }
    }
    if json {
        println!(
            "{}",
            serde_json::json!({ "receipts": receipts.len(), "valid": true })
        );
    } else {
        println!(
            "valid: {} receipts, one chain, signed by this store",
            receipts.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `memloop key`.
#[derive(Args, Debug)]
pub struct KeyArgs {
    #[command(subcommand)]
    command: KeyCommand,
}

#[derive(Subcommand, Debug)]
enum KeyCommand {
    /// Replace the key that unlocks the store's key ring: a new random key in the key file,
    /// or, with MEMLOOP_NEW_KEY set, a new passphrase. Data keys are rewrapped; no record is
    /// rewritten. Back the new key file up: copies of the old one still unlock the data keys
    /// it held.
    Rotate {
        /// Write the ring to this key file instead (the old one is left as it is: delete it).
        #[arg(long)]
        to: Option<PathBuf>,
    },
    /// Print the key ring as one line of text (`memloop-ring1:…`) to carry to another of your
    /// devices by hand, every key wrapped under the passphrase in MEMLOOP_RING_PASSPHRASE
    /// (Argon2id). Never put it where the store syncs or is backed up; the key file is not
    /// changed.
    #[command(
        after_help = "Example:\n  MEMLOOP_RING_PASSPHRASE='…' memloop --key-file ~/.memloop.key key export > ring.txt"
    )]
    Export,
    /// Write a ring exported on another device to --key-file (which must not exist yet),
    /// unlocked there by MEMLOOP_KEY's passphrase when set, else by a new random key in the
    /// file. The text is the argument, or stdin with `-` or none; MEMLOOP_RING_PASSPHRASE
    /// unlocks it.
    #[command(
        after_help = "Example:\n  MEMLOOP_RING_PASSPHRASE='…' memloop --key-file ~/.memloop.key key import - < ring.txt"
    )]
    Import {
        /// The exported text, or `-` (the default) to read it from stdin.
        #[arg(default_value = "-")]
        text: String,
    },
}

/// The passphrase an exported ring is wrapped under.
fn ring_passphrase() -> Result<String> {
    match std::env::var("MEMLOOP_RING_PASSPHRASE") {
        Ok(p) if !p.is_empty() => Ok(p),
        _ => bail!(
            "set MEMLOOP_RING_PASSPHRASE to the passphrase the exported ring is wrapped under"
        ),
    }
}

/// Runs `memloop key …`.
pub fn key(store: &StoreArgs, a: &KeyArgs) -> Result<()> {
    let Some(current) = store.encryption() else {
        bail!("give the store's key file: --key-file F (or MEMLOOP_KEY_FILE)");
    };
    let to = match &a.command {
        KeyCommand::Rotate { to } => to,
        KeyCommand::Export => {
            // As the engine's error, so the exit status names its category (10: keys).
            let text = current
                .export_ring(&ring_passphrase()?)
                .map_err(memloop::Error::from)?;
            println!("{}", text.as_str());
            return Ok(());
        }
        KeyCommand::Import { text } => {
            let text = if text == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(
                    &mut std::io::Read::take(std::io::stdin(), 1 << 30),
                    &mut s,
                )
                .context("read the exported ring from stdin")?;
                s
            } else {
                text.clone()
            };
            current
                .import_ring(&text, &ring_passphrase()?)
                .map_err(memloop::Error::from)?;
            eprintln!(
                "memloop: the key ring is in {}, unlocked by {}",
                current.key_file.display(),
                if current.passphrase.is_some() {
                    "MEMLOOP_KEY's passphrase"
                } else {
                    "a new key in that file (back it up)"
                }
            );
            return Ok(());
        }
    };
    let file = to.clone().unwrap_or(current.key_file.clone());
    let new = match std::env::var("MEMLOOP_NEW_KEY") {
        Ok(pass) => Encryption::passphrase(&file, pass),
        Err(_) => Encryption::key_file(&file),
    };
    let memory = store.open_existing(Durability::Synced)?;
    let rotated = memory.admin().rotate_key(&new);
    crate::store_args::close(memory);
    rotated?;
    eprintln!(
        "memloop: the key ring is now unlocked by {} in {}",
        if new.passphrase.is_some() {
            "the new passphrase"
        } else {
            "a new key"
        },
        file.display()
    );
    Ok(())
}
