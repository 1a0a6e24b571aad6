//! Times given on the command line and to the MCP tools: Unix seconds or RFC 3339.

/// Parses Unix seconds or an RFC 3339 UTC time (`2026-11-22T10:00:00Z`) into milliseconds.
pub fn parse_time(s: &str) -> Result<i64, String> {
    if let Ok(secs) = s.trim().parse::<i64>() {
        return secs
            .checked_mul(1000)
            .ok_or_else(|| format!("`{s}` is out of range"));
    }
    memloop::time::parse_rfc3339(s.trim()).ok_or_else(|| {
        format!("`{s}` is neither Unix seconds nor an RFC 3339 time like 2026-11-22T10:00:00Z")
    })
}

/// Checks a time argument, keeping its text (forwarded as given to a serving process).
pub fn parse_time_checked(s: &str) -> Result<String, String> {
    parse_time(s).map(|_| s.to_string())
}
