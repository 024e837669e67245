//! Giving freed memory back to the system. What a sync, an embedding round or a closed model
//! session frees goes back to the C allocator, which keeps most of it for later (glibc's heaps
//! trim only their top): without asking, an idle server would hold what its last work used.
//! Measured (release build, no model): after a first sync of 100,000 files an idle server held
//! 297 MB of anonymous memory, 66 MB once the sync gave back what it freed; after a restart's
//! listing of those files, 69 MB and 16 MB.
//!
//! glibc also gives each thread that allocates while another holds a heap's lock a heap of its
//! own, up to eight per core; what one thread frees stays in its heap for it alone. A sync's
//! threads (tokio's, tantivy's, the plugins') each kept a heap of freed text: the first keyword
//! sync of 43,000 source files peaked at 379 MiB of anonymous memory, 292 MiB with one heap a
//! core (`make bench`, `home_folder`).

/// Empties `slot` (a model session or engine loaded on demand), drops what it held and gives
/// the freed memory back to the system; whether it held anything.
pub fn release<T>(slot: &std::sync::Mutex<Option<T>>) -> bool {
    let released = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    let held = released.is_some();
    if held {
        drop(released);
        give_back();
    }
    held
}

/// Asks the C allocator to return the free memory it holds to the system.
#[allow(unsafe_code)]
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists under its locks; it takes
    // no pointer of ours and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Has the C allocator keep one heap per core (glibc's default is eight), so memory one thread
/// frees serves the others. Called first thing in `main`, before any thread starts.
#[allow(unsafe_code)]
pub fn one_heap_per_core() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let heaps = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets a tunable of the allocator under its own lock; it takes no
        // pointer and is safe at any time (no thread but this one runs yet).
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, heaps);
        }
    }
}
