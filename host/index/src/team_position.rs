//! Where a team host's copy of the index stands in the team's log, and the wait of a write for
//! its own change to show: bounded, so a write whose copy stopped following fails instead of
//! hanging its sync.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::IndexError;

/// The position of the last change of the log the copy applied.
pub(crate) struct TeamPosition {
    applied: Mutex<u64>,
    /// Notified whenever `applied` moves.
    moved: Condvar,
    /// How long [`TeamPosition::wait_for`] waits at most.
    wait: Duration,
}

impl TeamPosition {
    /// At `applied`, with writes waiting `wait` at most.
    pub(crate) fn new(applied: u64, wait: Duration) -> TeamPosition {
        TeamPosition {
            applied: Mutex::new(applied),
            moved: Condvar::new(),
            wait,
        }
    }

    /// The copy applied the log up to `position` (after emptying it, with `reset`: then the
    /// position may go back).
    pub(crate) fn moved_to(&self, position: u64, reset: bool) {
        let mut applied = self.applied.lock().unwrap_or_else(PoisonError::into_inner);
        *applied = if reset {
            position
        } else {
            position.max(*applied)
        };
        self.moved.notify_all();
    }

    /// Waits until the copy holds the log's changes up to `position`; an error after the wait.
    pub(crate) fn wait_for(&self, position: u64) -> Result<(), IndexError> {
        let deadline = Instant::now() + self.wait;
        let mut applied = self.applied.lock().unwrap_or_else(PoisonError::into_inner);
        while *applied < position {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(IndexError::Team(format!(
                    "this host's index did not show the team's change {position} within {} ms \
                     (it holds changes up to {})",
                    self.wait.as_millis(),
                    *applied
                )));
            }
            applied = self
                .moved
                .wait_timeout(applied, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_write_waits_for_its_change_and_no_longer_than_its_bound() {
        let position = Arc::new(TeamPosition::new(3, Duration::from_millis(200)));
        assert!(position.wait_for(3).is_ok(), "already shown");
        let started = Instant::now();
        let refused = position.wait_for(5);
        let waited = started.elapsed();
        assert!(
            matches!(&refused, Err(IndexError::Team(m)) if m.contains("change 5") && m.contains("up to 3")),
            "{refused:?}"
        );
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        // Shown from another thread (the follower) while it waits: it returns then.
        let follower = {
            let position = position.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                position.moved_to(5, false);
            })
        };
        assert!(position.wait_for(5).is_ok());
        follower.join().expect("the follower");
        // A reset moves it back; an older change applied late does not.
        position.moved_to(4, false);
        assert!(position.wait_for(5).is_ok());
        position.moved_to(0, true);
        assert!(position.wait_for(1).is_err());
    }
}
