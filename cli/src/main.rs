//! `memloop`: the command-line front of the memory engine.
//!
//! Built so far: `memloop embed`, which turns JSON Lines of text into JSON Lines of vectors with
//! a local model. The store commands arrive with the engine.

mod embed;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "memloop",
    version,
    about = "On-device long-term memory for LLM agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Embed text: one JSON string per line on stdin, one JSON array of floats per line on stdout.
    #[command(
        after_help = "Examples:\n  echo '\"hello world\"' | memloop embed\n  memloop embed --model ~/.cache/memloop/models/all-MiniLM-L6-v2 --query < questions.jsonl"
    )]
    Embed(embed::EmbedArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Embed(args) => embed::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memloop: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
