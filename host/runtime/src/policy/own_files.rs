//! Quarry's own data as files, not only folders: a hard link to a file of the data folder (what a
//! hard-link backup of a home folder, `cp -al` or rsnapshot, makes) is the same file under
//! another name, and a copy of a data folder elsewhere holds the same kind of data. Both are
//! told here, with no instance state: the sandbox's opens ask.

use std::collections::HashSet;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rustix::fs::{AtFlags, FileType};

/// Entries walked in the protected folders at most (they hold a database, an index of a few
/// hundred files, models, components).
const MAX_ENTRIES: usize = 200_000;

/// The files of the protected folders by device and inode, walked when first needed and again
/// whenever one of their folders changed (a file added or removed changes its folder's time).
#[derive(Debug, Default)]
pub(crate) struct OwnFiles {
    roots: Vec<PathBuf>,
    /// Devices the roots lie on: a hard link never crosses devices, so a file elsewhere needs
    /// no look.
    devices: HashSet<u64>,
    walked: Mutex<Option<Walked>>,
}

#[derive(Debug)]
struct Walked {
    files: HashSet<(u64, u64)>,
    /// Every folder walked, with its change time when walked.
    folders: Vec<(PathBuf, (i64, i64))>,
}

impl OwnFiles {
    /// Over the protected folders and files `roots` (real paths).
    pub(crate) fn new(roots: Vec<PathBuf>) -> OwnFiles {
        let devices = roots
            .iter()
            .filter_map(|r| std::fs::metadata(r).ok())
            .map(|m| m.dev())
            .collect();
        OwnFiles {
            roots,
            devices,
            walked: Mutex::new(None),
        }
    }

    /// Whether the regular file `meta` describes is one of the protected files under another
    /// name. Only a file with more than one name can be; only one on a device of theirs needs a
    /// look.
    pub(crate) fn is_linked(&self, meta: &Metadata) -> bool {
        if !meta.is_file() || meta.nlink() < 2 || !self.devices.contains(&meta.dev()) {
            return false;
        }
        let mut walked = self.walked.lock().unwrap_or_else(PoisonError::into_inner);
        if walked.as_ref().is_none_or(Walked::is_stale) {
            *walked = Some(walk(&self.roots));
        }
        walked
            .as_ref()
            .is_some_and(|w| w.files.contains(&(meta.dev(), meta.ino())))
    }
}

impl Walked {
    fn is_stale(&self) -> bool {
        self.folders.iter().any(|(folder, time)| {
            std::fs::metadata(folder).map(|m| changed(&m)).ok() != Some(*time)
        })
    }
}

fn changed(meta: &Metadata) -> (i64, i64) {
    (meta.mtime(), meta.mtime_nsec())
}

/// The files under `roots` (links not followed), and the folders walked.
fn walk(roots: &[PathBuf]) -> Walked {
    let mut walked = Walked {
        files: HashSet::new(),
        folders: Vec::new(),
    };
    let mut pending: Vec<PathBuf> = Vec::new();
    for root in roots {
        match std::fs::symlink_metadata(root) {
            Ok(meta) if meta.is_dir() => pending.push(root.clone()),
            Ok(meta) if meta.is_file() => {
                walked.files.insert((meta.dev(), meta.ino()));
            }
            _ => {}
        }
    }
    let mut entries = 0usize;
    while let Some(folder) = pending.pop() {
        let Ok(meta) = std::fs::metadata(&folder) else {
            continue;
        };
        walked.folders.push((folder.clone(), changed(&meta)));
        let Ok(listing) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in listing.flatten() {
            entries += 1;
            if entries > MAX_ENTRIES {
                return walked;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                pending.push(entry.path());
            } else if meta.is_file() {
                walked.files.insert((meta.dev(), meta.ino()));
            }
        }
    }
    walked
}

/// Files whose presence beside a `quarry.db` marks a folder as a Quarry data folder: the index's
/// layout file, the file where a server notes its address, the admin token and sealing key older
/// Quarrys kept there.
const DATA_FOLDER_MARKS: &[&str] = &[
    "index/quarry-format",
    "server-url",
    "admin-token",
    "secret.key",
];

/// Whether `folder` is a Quarry data folder, wherever it sits (a copy in a backup, a second data
/// folder): it holds `quarry.db` and one of [`DATA_FOLDER_MARKS`]. Nothing is opened or followed.
pub(crate) fn is_data_folder(folder: &Path) -> bool {
    let Ok(dir) = rustix::fs::open(
        folder,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) else {
        return false;
    };
    let regular = |name: &str| {
        rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::RegularFile)
    };
    regular("quarry.db") && DATA_FOLDER_MARKS.iter().any(|mark| regular(mark))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hard_link_to_a_protected_file_is_told_and_a_copy_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("index")).expect("mkdir");
        std::fs::write(data.join("quarry.db"), b"db").expect("write");
        let own = OwnFiles::new(vec![data.canonicalize().expect("real")]);
        let elsewhere = dir.path().join("backup");
        std::fs::create_dir(&elsewhere).expect("mkdir");
        std::fs::hard_link(data.join("quarry.db"), elsewhere.join("db-link")).expect("link");
        std::fs::copy(data.join("quarry.db"), elsewhere.join("db-copy")).expect("copy");
        let meta = |p: &Path| std::fs::metadata(p).expect("meta");
        assert!(own.is_linked(&meta(&elsewhere.join("db-link"))));
        assert!(!own.is_linked(&meta(&elsewhere.join("db-copy"))));
        // A file added later is seen: its folder changed.
        std::fs::write(data.join("index/segment"), b"s").expect("write");
        std::fs::hard_link(data.join("index/segment"), elsewhere.join("seg-link")).expect("link");
        assert!(own.is_linked(&meta(&elsewhere.join("seg-link"))));
    }

    #[test]
    fn a_data_folder_is_known_by_what_it_holds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let copy = dir.path().join("quarry-copy");
        std::fs::create_dir_all(copy.join("index")).expect("mkdir");
        std::fs::write(copy.join("quarry.db"), b"db").expect("write");
        assert!(!is_data_folder(&copy), "a database alone may be anyone's");
        std::fs::write(copy.join("index/quarry-format"), b"9").expect("write");
        assert!(is_data_folder(&copy));
        assert!(!is_data_folder(dir.path()));
    }
}
