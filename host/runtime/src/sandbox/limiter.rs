//! The memory cap of one instance.

use wasmtime::ResourceLimiter;

/// Caps the linear memory of one instance (all its memories together) and remembers whether the
/// cap was hit, so a crash that follows can be reported as what it is.
pub(crate) struct MemoryLimiter {
    limit: u64,
    /// Bytes of linear memory the instance has (memories only grow, so this is also its peak).
    pub(crate) used: u64,
    pub(crate) hit: bool,
}

impl MemoryLimiter {
    pub(crate) fn new(limit: u64) -> Self {
        MemoryLimiter {
            limit,
            used: 0,
            hit: false,
        }
    }
}

/// Table elements one instance may have.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let grow = desired.saturating_sub(current) as u64;
        if self.used.saturating_add(grow) > self.limit {
            self.hit = true;
            return Ok(false);
        }
        self.used += grow;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limiter_counts_all_memories() -> wasmtime::Result<()> {
        let mut limiter = MemoryLimiter::new(100);
        assert!(limiter.memory_growing(0, 60, None)?);
        assert!(limiter.memory_growing(0, 40, None)?);
        assert!(!limiter.memory_growing(40, 41, None)?);
        assert!(limiter.hit);
        Ok(())
    }
}
