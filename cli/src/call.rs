//! `memloop call OP [REQUEST]`: any operation of the registry, its request given as JSON (the
//! fields every door takes, as MCP's tools and the C ABI's `memloop_call` take them), its
//! answer printed as JSON. Run on the store opened here, or in the process serving it.

use std::io::Read;

use std::sync::OnceLock;

use anyhow::Result;
use clap::Args;
use serde_json::Value;

use crate::store_args::StoreArgs;
use crate::tool_call::ToolCall;

/// `memloop call`.
#[derive(Args, Debug)]
pub struct CallArgs {
    /// The operation (remember, update, remember_conversation, recall, context, feedback,
    /// record_task, observe, get, list, forget, explain_decay, stats, sweep, export, import, sync).
    operation: String,
    /// Its request as a JSON object (`-` reads it from stdin; absent: no fields).
    request: Option<String>,
    /// The request's fields, read once: stdin can be read only once, and a call refused
    /// here because another process holds the store is forwarded with the same fields.
    #[arg(skip)]
    fields: OnceLock<Result<Value, memloop::InvalidInput>>,
}

impl CallArgs {
    /// The request's JSON (read on the first call).
    fn fields(&self) -> Result<Value, memloop::InvalidInput> {
        self.fields.get_or_init(|| self.read()).clone()
    }

    fn read(&self) -> Result<Value, memloop::InvalidInput> {
        let bad = |reason: String| memloop::InvalidInput::Field {
            field: "request",
            reason,
        };
        let text = match self.request.as_deref() {
            None => return Ok(Value::Null),
            Some("-") => {
                let mut text = String::new();
                std::io::stdin()
                    .take(crate::lines::MAX_LINE_BYTES as u64)
                    .read_to_string(&mut text)
                    .map_err(|e| bad(format!("cannot read it from stdin: {e}")))?;
                text
            }
            Some(text) => text.to_string(),
        };
        serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))
    }

    /// This command as the operation it names, printed as JSON (run here or by the process
    /// serving the store). `None` for a name that is no operation or fields it does not take:
    /// the call is refused here, with the error saying which.
    pub fn as_tool(&self) -> Option<ToolCall> {
        let request = memloop::Request::parse(&self.operation, self.fields().ok()?).ok()?;
        Some(ToolCall::operation(request, true))
    }
}

/// `memloop call`: the operation run on the store opened here, creating it for a remember.
pub fn call(store: &StoreArgs, a: &CallArgs) -> Result<()> {
    let op = memloop::Operation::named(&a.operation).map_err(memloop::Error::from)?;
    let fields = a.fields().map_err(memloop::Error::from)?;
    // The request is checked before a store is opened or created.
    let request = memloop::Request::parse(op.name(), fields).map_err(memloop::Error::from)?;
    let call = ToolCall::operation(request, true);
    crate::commands::run_on(store, call, op == memloop::Operation::Remember)
}
