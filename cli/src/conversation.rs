//! `memloop conversation`: remember turns of a chat session, or list them.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use memloop::{plug::Turn, Durability, Scope};
use serde::Deserialize;

use crate::lines::{BoundedLines, MAX_LINE_BYTES};
use crate::store_args::StoreArgs;
use crate::time_arg::parse_time;

/// `memloop conversation`.
#[derive(Args, Debug)]
pub struct ConversationArgs {
    /// The conversation (session) id; later calls with the same id continue it.
    session: String,
    /// JSON Lines of turns, `{"speaker": …, "text": …, "time": …}` (time: RFC 3339 or Unix
    /// seconds, as a string or a number); `-` reads stdin. Left out with `--show`.
    #[arg(required_unless_present = "show")]
    file: Option<PathBuf>,
    /// The user the conversation belongs to.
    #[arg(long)]
    user: Option<String>,
    /// The agent it belongs to.
    #[arg(long)]
    agent: Option<String>,
    /// List the session's turns, in order, instead of adding any.
    #[arg(long, conflicts_with = "file")]
    show: bool,
    /// Print JSON: the report (`{"session", "turns", "first_turn", "summary", "extracted"}`),
    /// or with `--show` one memory object per line.
    #[arg(long)]
    json: bool,
}

/// A turn as a line gives it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnLine {
    speaker: String,
    text: String,
    time: serde_json::Value,
}

/// The turns of `input`, every line checked before anything is written.
fn read_turns(input: impl BufRead, name: &str) -> Result<Vec<Turn>> {
    let mut turns = Vec::new();
    for (i, line) in BoundedLines::new(input, MAX_LINE_BYTES).enumerate() {
        let line = line.map_err(|e| anyhow::anyhow!("{name}: line {}: {e}", i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let t: TurnLine = serde_json::from_str(&line)
            .with_context(|| format!("{name}: line {}: not a turn object", i + 1))?;
        let time = match &t.time {
            serde_json::Value::String(s) => parse_time(s),
            serde_json::Value::Number(n) => parse_time(&n.to_string()),
            other => Err(format!("`{other}` is not a time")),
        }
        .map_err(|e| anyhow::anyhow!("{name}: line {}: time: {e}", i + 1))?;
        turns.push(Turn::new(t.speaker, t.text, time));
    }
    Ok(turns)
}

pub fn conversation(store: &StoreArgs, a: &ConversationArgs) -> Result<()> {
    let scope = Scope {
        user: a.user.clone(),
        agent: a.agent.clone(),
        session: None,
    };
    let mut out = std::io::stdout().lock();
    if a.show {
        let memory = store.open_existing(Durability::Synced)?;
        let turns = memory.scoped(&scope).conversation(&a.session)?;
        crate::store_args::close(memory);
        for t in turns {
            if a.json {
                writeln!(out, "{}", crate::output::item_json(&t))?;
            } else {
                let when = memloop::time::format_minute(t.valid_from);
                writeln!(out, "[{when}] {}", t.text)?;
            }
        }
        return Ok(());
    }
    let turns = match a.file.as_deref() {
        Some(p) if p.as_os_str() == "-" => read_turns(std::io::stdin().lock(), "stdin")?,
        Some(p) => {
            let f =
                std::fs::File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
            read_turns(std::io::BufReader::new(f), &p.display().to_string())?
        }
        None => bail!("give a file of turns, `-` for stdin, or --show"),
    };
    let memory = store.open(Durability::Synced)?;
    let report = memory.remember_conversation(&a.session, &turns, &scope)?;
    crate::store_args::close(memory);
    if a.json {
        writeln!(out, "{}", serde_json::to_value(&report)?)?;
    } else {
        writeln!(out, "remembered {report}")?;
    }
    Ok(())
}
