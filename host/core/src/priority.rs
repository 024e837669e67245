//! Background work yields to searches: indexing, embedding and plugin calls run on threads whose
//! scheduling priority is lowered, so a search arriving during a sync gets the CPU first.

/// The niceness given to background threads (0 is normal, 19 the lowest priority).
pub const BACKGROUND_NICENESS: i32 = 10;
/// The niceness of work that should yield even to syncs: computing passage vectors, which a
/// document can wait for because it is searchable by keyword already.
pub const IDLE_NICENESS: i32 = 19;

/// Lowers the calling thread's priority to [`BACKGROUND_NICENESS`] (a thread already lower
/// stays so). Threads it starts afterwards
/// inherit it (so a thread pool created from it runs in the background too). A priority lowered
/// cannot be raised again without privileges: call it only on threads that do background work
/// for their whole life, never on a pooled thread that may later serve a request. Best effort:
/// where the system refuses, the thread keeps its priority.
pub fn run_in_background() {
    lower_to(BACKGROUND_NICENESS);
}

/// Lowers the calling thread's priority to [`IDLE_NICENESS`], below background work: it then
/// gets the CPU only what searches and syncs leave. As [`run_in_background`] otherwise.
pub fn run_when_idle() {
    lower_to(IDLE_NICENESS);
}

fn lower_to(niceness: i32) {
    #[cfg(target_os = "linux")]
    {
        // On Linux a thread id addresses one thread: only this thread is changed.
        let thread = rustix::thread::gettid();
        let current = rustix::process::getpriority_process(Some(thread)).unwrap_or(0);
        if current < niceness {
            let _ = rustix::process::setpriority_process(Some(thread), niceness);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = niceness;
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
