//! Small helpers the benchmarks share: settings from the environment, latency percentiles and
//! a process's resident memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Peaks of a process's resident memory by kind, in MiB.
#[derive(Default, Clone, Copy)]
pub struct MemoryPeaks {
    /// Anonymous memory (heap, stacks): `RssAnon`.
    pub anon_mib: f64,
    /// File-backed pages (mapped index files and the binary): `RssFile`.
    pub file_mib: f64,
}

/// Samples a process's `RssAnon` and `RssFile` every 100 ms until finished; keeps the peaks.
pub struct MemorySampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<MemoryPeaks>,
}

impl MemorySampler {
    /// Starts sampling process `pid`.
    pub fn start(pid: u32) -> MemorySampler {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut peaks = MemoryPeaks::default();
                while !stop.load(Ordering::Relaxed) {
                    let (Some(anon), Some(file)) =
                        (status_mib(pid, "RssAnon:"), status_mib(pid, "RssFile:"))
                    else {
                        break;
                    };
                    peaks.anon_mib = peaks.anon_mib.max(anon);
                    peaks.file_mib = peaks.file_mib.max(file);
                    std::thread::sleep(Duration::from_millis(100));
                }
                peaks
            })
        };
        MemorySampler { stop, thread }
    }

    /// Stops sampling; the peaks seen.
    pub fn finish(self) -> MemoryPeaks {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("memory sampler")
    }
}

/// Process `pid`'s peak resident memory (`VmHWM`), in MiB.
pub fn peak_rss_mib(pid: u32) -> f64 {
    status_mib(pid, "VmHWM:").expect("VmHWM in /proc/<pid>/status")
}

/// The memory figure `field` (e.g. `VmHWM:`) of process `pid`'s `/proc/<pid>/status`, in MiB;
/// `None` once the process is gone.
pub fn status_mib(pid: u32, field: &str) -> Option<f64> {
    crate::proc_status::status_kib(pid, field).map(|kib| kib as f64 / 1024.0)
}

/// sentence-transformers on PyTorch embedding the same passages with the same model: the
/// embedding benches' baseline (`tests/bench/st_embed.py`).
pub struct TorchRate {
    /// Passages a second, the best of two passes.
    pub passages_per_s: f64,
    /// PyTorch's version.
    pub torch: String,
    /// sentence-transformers' version.
    pub sentence_transformers: String,
}

/// Runs `tests/bench/st_embed.py` on `passages` (fp32, `threads` threads, batches of `batch`)
/// in the bench-only virtualenv (`QUARRY_ST_BENCH`, or `~/.cache/quarry/tools/st-bench`, which
/// `scripts/bench-venv.sh` installs); `None` when that virtualenv is not there.
pub fn sentence_transformers(
    passages: &[String],
    threads: usize,
    batch: usize,
) -> Option<TorchRate> {
    let venv = std::env::var_os("QUARRY_ST_BENCH").map_or_else(
        || {
            std::path::PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/quarry/tools/st-bench")
        },
        std::path::PathBuf::from,
    );
    let python = venv.join("bin/python");
    if !python.is_file() {
        return None;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("passages.json");
    std::fs::write(&file, serde_json::to_vec(passages).expect("json")).expect("write passages");
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/st_embed.py");
    let output = std::process::Command::new(&python)
        .arg(&script)
        .arg("auto")
        .arg(&file)
        .arg(threads.to_string())
        .arg(batch.to_string())
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "st_embed.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("st_embed.py prints JSON");
    let text = |key: &str| answer[key].as_str().unwrap_or("?").to_owned();
    Some(TorchRate {
        passages_per_s: answer["passages_per_s"].as_f64().unwrap_or(0.0),
        torch: text("torch"),
        sentence_transformers: text("sentence_transformers"),
    })
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
