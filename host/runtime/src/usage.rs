//! What a plugin's calls cost: how many, CPU time, and peak memory.

use std::time::Duration;

use rustix::time::{ClockId, clock_gettime};

/// The cost of a run of plugin calls (one session, or a connector's life).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Calls made (list-docs, fetch-content, read-file, validate-config).
    pub calls: u64,
    /// Of those, the ones that failed (the plugin's own error, a trap, a timeout, the memory cap).
    pub failed_calls: u64,
    /// CPU time the calls took on the calling thread: making a new instance when one was
    /// needed, the plugin's code and the host functions it called (reading files, logging), not
    /// time spent waiting.
    pub cpu: Duration,
    /// The most linear memory one instance held, in bytes.
    pub peak_memory_bytes: u64,
    /// Bytes its streams read and wrote (`network.open-stream`).
    pub network_bytes: u64,
}

impl Usage {
    /// What was added since `earlier`, an earlier reading of the same counter (the peak is kept
    /// as it is: it is a maximum, not a sum).
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            calls: self.calls.saturating_sub(earlier.calls),
            failed_calls: self.failed_calls.saturating_sub(earlier.failed_calls),
            cpu: self.cpu.saturating_sub(earlier.cpu),
            peak_memory_bytes: self.peak_memory_bytes,
            network_bytes: self.network_bytes.saturating_sub(earlier.network_bytes),
        }
    }
}

/// CPU time used by the current thread so far.
pub(crate) fn thread_cpu_time() -> Duration {
    let t = clock_gettime(ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work_and_deltas_subtract() {
        let start = thread_cpu_time();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_time() > start);
        let later = Usage {
            calls: 5,
            failed_calls: 1,
            cpu: Duration::from_millis(30),
            peak_memory_bytes: 1 << 20,
            network_bytes: 5000,
        };
        let earlier = Usage {
            calls: 2,
            failed_calls: 1,
            cpu: Duration::from_millis(10),
            peak_memory_bytes: 1 << 19,
            network_bytes: 1000,
        };
        assert_eq!(
            later.since(&earlier),
            Usage {
                calls: 3,
                failed_calls: 0,
                cpu: Duration::from_millis(20),
                peak_memory_bytes: 1 << 20,
                network_bytes: 4000,
            }
        );
    }
}
