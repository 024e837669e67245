//! Background work yields to searches: indexing, embedding and plugin calls run on threads whose
//! scheduling priority is lowered, so a search arriving during a sync gets the CPU first.

/// The niceness given to background threads (0 is normal, 19 the lowest priority).
pub const BACKGROUND_NICENESS: i32 = 10;

/// Lowers the calling thread's priority to [`BACKGROUND_NICENESS`] (a thread already lower
/// stays so). Threads it starts afterwards
/// inherit it (so a thread pool created from it runs in the background too). A priority lowered
/// cannot be raised again without privileges: call it only on threads that do background work
/// for their whole life, never on a pooled thread that may later serve a request. Best effort:
/// where the system refuses, the thread keeps its priority.
pub fn run_in_background() {
    #[cfg(target_os = "linux")]
    {
        // On Linux a thread id addresses one thread: only this thread is changed.
        let thread = rustix::thread::gettid();
        let current = rustix::process::getpriority_process(Some(thread)).unwrap_or(0);
        if current < BACKGROUND_NICENESS {
            let _ = rustix::process::setpriority_process(Some(thread), BACKGROUND_NICENESS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn only_the_calling_thread_is_lowered() {
        let before = rustix::process::getpriority_process(None).expect("priority");
        let inside = std::thread::spawn(|| {
            run_in_background();
            let me = rustix::thread::gettid();
            let spawned = std::thread::spawn(|| {
                rustix::process::getpriority_process(Some(rustix::thread::gettid()))
                    .expect("priority")
            })
            .join()
            .expect("joins");
            (
                rustix::process::getpriority_process(Some(me)).expect("priority"),
                spawned,
            )
        })
        .join()
        .expect("joins");
        assert!(inside.0 >= BACKGROUND_NICENESS, "{inside:?}");
        assert_eq!(inside.0, inside.1, "threads it starts inherit it");
        let after = rustix::process::getpriority_process(None).expect("priority");
        assert_eq!(before, after, "the calling thread's priority is untouched");
    }
}
