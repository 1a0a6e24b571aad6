//! Process memory readings (Linux `/proc/self/statm`).

/// Resident set size of this process in MiB (0 where unavailable).
pub fn rss_mb() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/statm") else {
        return 0.0;
    };
    let pages: f64 = s
        .split_whitespace()
        .nth(1)
        .and_then(|x| x.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}
