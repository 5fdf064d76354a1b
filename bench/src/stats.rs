//! Shared arithmetic and formatting of the benchmarks.

use std::time::Duration;

/// Nearest-rank percentile.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn median(values: &[Duration]) -> Duration {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    percentile(&sorted, 50.0)
}

pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 { format!("{ms:.2} ms") } else { format!("{ms:.1} ms") }
}

pub fn mib(kib: i64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

pub fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**missed**" }
}
