//! A process's figures from `/proc/<pid>/status`.

/// The figure `field` (e.g. `VmHWM:`, `RssAnon:`) of process `pid`, in KiB as the kernel gives
/// it; `None` once the process is gone (or the field is not there).
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
