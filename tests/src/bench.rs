//! Small helpers the benchmarks share: settings from the environment and latency percentiles.

use std::time::Duration;

/// The number in environment variable `name`, or `default`.
pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `p` quantile (0 to 1) of `times`, in milliseconds; 0 for no times.
pub fn percentile_ms(times: &[Duration], p: f64) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort();
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() as f64 * p) as usize).min(sorted.len() - 1);
    sorted[at].as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_from_the_sorted_times() {
        let times: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        assert_eq!(percentile_ms(&times, 0.5), 51.0);
        assert_eq!(percentile_ms(&times, 0.99), 100.0);
        assert_eq!(percentile_ms(&[], 0.5), 0.0);
    }
}
