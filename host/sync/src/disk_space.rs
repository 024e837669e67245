//! A full disk, survived. The data folder keeps a reserve file; when a sync fails because the
//! file system is full, the scheduler gives the reserve up so that the failure itself can be
//! written (SQLite needs a few pages to record it), pauses syncs, and resumes them by itself once
//! enough space is free again. The database and the index stay valid throughout: a failed index
//! commit is rolled back, a failed SQLite transaction leaves the file as it was, and a sync's
//! checkpoint only moves after the index holds its batch.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::SyncError;

/// The reserve's size.
pub const RESERVE_BYTES: u64 = 4 << 20;

/// Free space at which syncs resume: the reserve made again, and as much room again.
pub const RESUME_FREE_BYTES: u64 = 2 * RESERVE_BYTES;

/// The reserve file in a data folder.
#[derive(Debug, Clone)]
pub struct DiskReserve {
    file: PathBuf,
}

impl DiskReserve {
    /// The reserve of the data folder `data_dir` (made by [`DiskReserve::make`]).
    pub fn of(data_dir: &Path) -> DiskReserve {
        DiskReserve {
            file: data_dir.join("disk-reserve"),
        }
    }

    /// Makes the reserve unless it is there, with real blocks (zeros written and flushed, not a
    /// sparse file). Returns whether it is in place; without room for it, it is not.
    pub fn make(&self) -> bool {
        if std::fs::metadata(&self.file).is_ok_and(|m| m.len() >= RESERVE_BYTES) {
            return true;
        }
        let partial = self.file.with_extension("part");
        let written = (|| -> std::io::Result<()> {
            let mut file = std::fs::File::create(&partial)?;
            let block = vec![0u8; 1 << 20];
            let mut left = RESERVE_BYTES;
            while left > 0 {
                let n = left.min(block.len() as u64);
                file.write_all(&block[..n as usize])?;
                left -= n;
            }
            file.sync_all()?;
            std::fs::rename(&partial, &self.file)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&partial);
            tracing::warn!("no room for the data folder's disk reserve: {e}");
            return false;
        }
        true
    }

    /// Gives the reserve up; returns whether there was one.
    pub fn release(&self) -> bool {
        std::fs::remove_file(&self.file).is_ok()
    }

    /// Bytes this user may still write on the data folder's file system.
    pub fn available(&self) -> Option<u64> {
        let dir = self.file.parent()?;
        let stat = rustix::fs::statvfs(dir).ok()?;
        Some(stat.f_bavail.saturating_mul(stat.f_frsize))
    }

    /// Whether there is room to resume syncing.
    pub fn room_to_resume(&self) -> bool {
        self.available()
            .is_some_and(|free| free >= RESUME_FREE_BYTES)
    }
}

impl SyncError {
    /// Whether the sync failed because the file system is full (or the user's quota spent):
    /// the index's or the database's write said so, anywhere in the chain of causes. SQLite and
    /// tantivy report it in words (`database or disk is full`, `No space left on device (os
    /// error 28)`), so the words are what is looked at.
    pub fn is_disk_full(&self) -> bool {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(error) = cause {
            if error
                .downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::raw_os_error)
                .is_some_and(|code| {
                    code == rustix::io::Errno::NOSPC.raw_os_error()
                        || code == rustix::io::Errno::DQUOT.raw_os_error()
                })
            {
                return true;
            }
            let text = error.to_string();
            if text.contains("(os error 28)")
                || text.contains("(os error 122)")
                || text.contains("database or disk is full")
            {
                return true;
            }
            cause = error.source();
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_made_once_given_up_and_made_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let reserve = DiskReserve::of(dir.path());
        assert!(reserve.make());
        let file = dir.path().join("disk-reserve");
        assert_eq!(std::fs::metadata(&file).expect("made").len(), RESERVE_BYTES);
        assert!(reserve.make(), "already there");
        assert!(reserve.release());
        assert!(!file.exists());
        assert!(!reserve.release(), "nothing left to give up");
        assert!(reserve.available().is_some_and(|free| free > 0));
    }

    #[test]
    fn a_full_disk_is_told_from_other_failures() {
        let full = SyncError::Thread {
            what: "writing",
            source: std::io::Error::from_raw_os_error(28),
        };
        assert!(full.is_disk_full());
        let other = SyncError::Thread {
            what: "writing",
            source: std::io::Error::from_raw_os_error(13),
        };
        assert!(!other.is_disk_full());
        assert!(SyncError::Invalid("database or disk is full".into()).is_disk_full());
        assert!(!SyncError::Gone.is_disk_full());
    }
}
