//! Times given on the command line outside a request of the engine's vocabulary (`sweep
//! --now`, a conversation file's turns): read as the vocabulary reads them.

/// Parses Unix seconds or an RFC 3339 UTC time (`2026-11-22T10:00:00Z`) into milliseconds,
/// with the engine's rule and error ([`memloop::requests::When::millis`]).
pub fn parse_time(s: &str) -> Result<i64, String> {
    memloop::requests::When::Text(s.to_string())
        .millis("time")
        .map_err(|e| e.to_string())
}
