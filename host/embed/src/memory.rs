//! Giving freed memory back to the system. ONNX Runtime frees a closed session's weights and
//! buffers to the C allocator, which keeps most of it for later (glibc's heaps trim only
//! their top): without asking, an idle server would hold what its last embedding round used.

/// Asks the C allocator to return the free memory it holds to the system.
#[allow(unsafe_code)]
pub(crate) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists under its locks; it takes
    // no pointer of ours and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
