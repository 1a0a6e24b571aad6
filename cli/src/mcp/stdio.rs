//! MCP's stdio transport with every incoming line checked before rmcp reads it: a line that
//! is not JSON (invalid UTF-8, a lone surrogate, nesting past serde_json's depth limit, plain
//! garbage) or that is longer than [`MAX_MESSAGE_BYTES`] is answered with a JSON-RPC error
//! (-32700 parse error, -32600 invalid request) carrying its id when one can be read, as the
//! specification asks, instead of silence that leaves the client waiting forever. Well-formed
//! lines pass through unchanged; rmcp answers them.

use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Mutex;

/// The longest message read: a remember of the largest text a memory may hold, with its other
/// versions and JSON escapes. A longer line is refused and skipped, never buffered whole.
pub const MAX_MESSAGE_BYTES: usize = crate::lines::MAX_LINE_BYTES;

/// Bytes buffered between this layer and rmcp, each way.
const PIPE_BYTES: usize = 1 << 20;

/// The reader and writer rmcp serves on; the tasks that move lines between them and the real
/// stdin and stdout run on the current runtime until stdin closes.
pub fn guarded() -> (DuplexStream, DuplexStream) {
    let (rmcp_in, to_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (from_rmcp, rmcp_out) = tokio::io::duplex(PIPE_BYTES);
    let stdout = Arc::new(Mutex::new(tokio::io::stdout()));
    tokio::spawn(read_lines(tokio::io::stdin(), to_rmcp, stdout.clone()));
    tokio::spawn(write_lines(from_rmcp, stdout));
    (rmcp_in, rmcp_out)
}

/// Passes each well-formed line of `input` to rmcp; answers the others itself.
async fn read_lines(
    input: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    stdout: Arc<Mutex<tokio::io::Stdout>>,
) {
    let mut input = BufReader::new(input);
    loop {
        let mut line = Vec::new();
        let read = (&mut input)
            .take(MAX_MESSAGE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .await;
        let Ok(n) = read else { break };
        if n == 0 {
            break;
        }
        let reply = if line.len() > MAX_MESSAGE_BYTES && line.last() != Some(&b'\n') {
            let id = request_id(&line);
            if skip_line(&mut input).await.is_err() {
                break;
            }
            Some(error(
                id,
                -32600,
                format!("Invalid Request: a message over {MAX_MESSAGE_BYTES} bytes"),
            ))
        } else {
            check(&line)
        };
        match reply {
            Some(reply) => {
                if send(&stdout, &reply).await.is_err() {
                    break;
                }
            }
            None => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            }
        }
    }
    // rmcp sees the end of its input and ends the session.
    let _ = to_rmcp.shutdown().await;
}

/// Reads and drops the rest of an over-long line.
async fn skip_line(input: &mut (impl tokio::io::AsyncBufRead + Unpin)) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// The error reply a line needs, or `None` when rmcp can read it. Blank lines pass (rmcp
/// ignores them).
fn check(line: &[u8]) -> Option<Value> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Some(error(
                request_id(line),
                -32700,
                format!("Parse error: invalid UTF-8 ({e})"),
            ))
        }
    };
    if text.trim().is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(_) => None,
        Err(e) => Some(error(request_id(line), -32700, format!("Parse error: {e}"))),
    }
}

/// The id a malformed request seems to carry (a number or a string after `"id":`), else null.
fn request_id(line: &[u8]) -> Value {
    let text = String::from_utf8_lossy(line);
    let mut rest = text.as_ref();
    while let Some(at) = rest.find("\"id\"") {
        rest = &rest[at + 4..];
        let after = rest.trim_start();
        let Some(value) = after.strip_prefix(':') else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_str(value).into_iter::<Value>();
        if let Some(Ok(id @ (Value::Number(_) | Value::String(_)))) = values.next() {
            return id;
        }
    }
    Value::Null
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Writes one reply line to stdout, whole.
async fn send(stdout: &Mutex<tokio::io::Stdout>, reply: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(reply).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let mut out = stdout.lock().await;
    out.write_all(&bytes).await?;
    out.flush().await
}

/// Copies rmcp's output to stdout a whole line at a time, so replies never interleave.
async fn write_lines(from_rmcp: DuplexStream, stdout: Arc<Mutex<tokio::io::Stdout>>) {
    let mut lines = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let mut out = stdout.lock().await;
                if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_lines_are_answered_with_their_id() {
        let garbage = check(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"").unwrap();
        assert_eq!(garbage["id"], 7);
        assert_eq!(garbage["error"]["code"], -32700);
        let surrogate =
            check(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"params\":\"\\ud800\"}").unwrap();
        assert_eq!(surrogate["id"], "a");
        let deep = format!(
            "{{\"id\": 3, \"x\": {}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(check(deep.as_bytes()).unwrap()["id"], 3);
        let bad_utf8 = check(b"{\"id\": 9, \"x\": \"\xff\"}").unwrap();
        assert_eq!(bad_utf8["id"], 9);
        assert_eq!(check(b"hello there").unwrap()["id"], Value::Null);
        assert!(check(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").is_none());
        assert!(check(b"\n").is_none());
    }
}
