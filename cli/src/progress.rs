//! Progress bars on a terminal (rate and ETA), nothing when stderr is piped.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `total` bytes, drawn on stderr only when it is a terminal.
pub fn bytes(total: u64, prefix: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(total).with_prefix(prefix);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} {msg}",
        )
        .expect("the template is valid"),
    );
    bar
}
