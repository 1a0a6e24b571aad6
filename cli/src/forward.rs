//! A command run in the process that serves the store, when another process holds it (an
//! agent's `memloop mcp`): `memloop recall` works while an agent has the store open.

use std::path::Path;

use crate::share::Peer;
use crate::tool_call::ToolCall;
use anyhow::{anyhow, Result};

/// True if `e` says the store is open in another process.
pub fn locked(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<memloop::Error>(),
            Some(memloop::Error::Locked { .. })
        )
    })
}

/// Runs `call` in the process serving store `dir` and prints its answer; `false` when no
/// process serves it (the holder opened it for itself).
///
/// # Errors
/// When the connection breaks or the tool fails.
pub fn run(dir: &Path, call: ToolCall) -> Result<bool> {
    let mut peer = match Peer::connect(dir) {
        Ok(peer) => peer,
        // Someone else answers on the socket: never a reason to wait, nor to send anything.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(anyhow!("store {}: {e}", dir.display()))
        }
        // It serves the store but refused this connection (all its peer slots taken): say
        // so rather than that it does not share (round 4, L9).
        Err(e) if e.kind() == std::io::ErrorKind::ResourceBusy => {
            return Err(anyhow!(
                "store {}: the process serving it refused this connection: {e}",
                dir.display()
            ))
        }
        Err(_) => return Ok(false),
    };
    let reply = peer
        .call(call.asked.name(), call.asked.arguments())
        .map_err(|e| anyhow!("the process serving store {} went away: {e}", dir.display()))?
        .map_err(|e| anyhow!("{e}"))?;
    crate::output::print_reply(&call, &reply);
    Ok(true)
}
