//! `memloop call OP [REQUEST]`: any operation of the registry, its request given as JSON (the
//! fields every door takes, as MCP's tools and the C ABI's `memloop_call` take them), its
//! answer printed as JSON. Run on the store opened here, or in the process serving it.

use std::io::Read;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;

use crate::forward::ToolCall;
use crate::store_args::StoreArgs;

/// `memloop call`.
#[derive(Args, Debug)]
pub struct CallArgs {
    /// The operation (remember, update, remember_conversation, recall, context, feedback,
    /// record_task, observe, get, list, forget, explain_decay, stats, sweep, export, import).
    operation: String,
    /// Its request as a JSON object (`-` reads it from stdin; absent: no fields).
    request: Option<String>,
}

impl CallArgs {
    /// The request's JSON.
    fn fields(&self) -> Result<Value> {
        let text = match self.request.as_deref() {
            None => return Ok(Value::Null),
            Some("-") => {
                let mut text = String::new();
                std::io::stdin()
                    .take(crate::lines::MAX_LINE_BYTES as u64)
                    .read_to_string(&mut text)
                    .context("read the request from stdin")?;
                text
            }
            Some(text) => text.to_string(),
        };
        serde_json::from_str(&text)
            .map_err(|e| {
                memloop::Error::from(memloop::InvalidInput::Field {
                    field: "request",
                    reason: format!("not JSON: {e}"),
                })
            })
            .map_err(Into::into)
    }

    /// This command as the operation it names, printed as JSON (run here or by the process
    /// serving the store). `None` for a name that is no operation: the call is refused here.
    pub fn as_tool(&self) -> Option<ToolCall> {
        let op = memloop::Operation::named(&self.operation).ok()?;
        Some(ToolCall {
            tool: op.name(),
            arguments: self.fields().ok()?,
            json: true,
        })
    }
}

/// `memloop call`: the operation run on the store opened here, creating it for a remember.
pub fn call(store: &StoreArgs, a: &CallArgs) -> Result<()> {
    let op = memloop::Operation::named(&a.operation).map_err(memloop::Error::from)?;
    let fields = a.fields()?;
    // The request is checked before a store is opened or created.
    memloop::Request::parse(op.name(), fields.clone()).map_err(memloop::Error::from)?;
    let call = ToolCall {
        tool: op.name(),
        arguments: fields,
        json: true,
    };
    crate::commands::run_on(store, call, op == memloop::Operation::Remember)
}
