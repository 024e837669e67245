//! A folder's entries with their files' sizes and times, or the start of a file, in one host
//! call (WIT 0.3.0 `read-folder`, `read-file-start`). WASI takes a host call per folder entry and
//! a stat per file, or an open, a read and a drop; these do the same work with a system call per
//! file and no call per entry. They open through the same guarded open as WASI (`guard.rs`,
//! from the mounts: a path of plain names, no symbolic link on the way).

use rustix::fs::{AtFlags, FileType};
use rustix::io::Errno;

use super::guard::{Denied, FileGuard, OpenFrom, Opened};
use super::read::{read_at, timestamp_ns};

/// Entries `read-folder` answers at most; a larger folder is read through WASI, as a stream.
const MAX_FOLDER_ENTRIES: usize = 100_000;

/// What an entry of a folder is.
pub(crate) enum EntryKind {
    File,
    Folder,
    Symlink,
    Other,
}

/// An entry of a folder; a file's with its size and modification time.
pub(crate) struct FolderEntry {
    pub(crate) name: String,
    pub(crate) kind: EntryKind,
    pub(crate) size_bytes: u64,
    pub(crate) modified_ns: Option<u64>,
}

/// Why a bulk read did not answer (the WIT's `read-error`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReadError {
    NotFound,
    Refused,
    WrongKind,
    TooLarge,
    Other,
}

impl FileGuard {
    /// The entries of the folder at sandbox path `path`; names that are not UTF-8 left out. A file
    /// that vanishes between the listing and its stat is left out too.
    pub(crate) fn read_folder(&mut self, path: &str) -> Result<Vec<FolderEntry>, ReadError> {
        let Opened { file: folder, meta } =
            self.open(OpenFrom::Mounts, path).map_err(read_error)?;
        if !meta.is_dir() {
            return Err(ReadError::WrongKind);
        }
        let listing = rustix::fs::Dir::read_from(&folder).map_err(|_| ReadError::Other)?;
        let mut entries = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|_| ReadError::Other)?;
            let name = entry.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let Ok(utf8) = name.to_str() else {
                continue;
            };
            if entries.len() == MAX_FOLDER_ENTRIES {
                return Err(ReadError::TooLarge);
            }
            let (kind, size_bytes, modified_ns) = match entry.file_type() {
                FileType::Directory => (EntryKind::Folder, 0, None),
                FileType::Symlink => (EntryKind::Symlink, 0, None),
                FileType::RegularFile | FileType::Unknown => {
                    // The file's own metadata (a link is not followed); the file system's type for
                    // an entry that did not say.
                    let Ok(stat) = rustix::fs::statat(&folder, name, AtFlags::SYMLINK_NOFOLLOW)
                    else {
                        continue;
                    };
                    match FileType::from_raw_mode(stat.st_mode) {
                        FileType::RegularFile => (
                            EntryKind::File,
                            u64::try_from(stat.st_size).unwrap_or(0),
                            timestamp_ns(stat.st_mtime, stat.st_mtime_nsec),
                        ),
                        FileType::Directory => (EntryKind::Folder, 0, None),
                        FileType::Symlink => (EntryKind::Symlink, 0, None),
                        _ => (EntryKind::Other, 0, None),
                    }
                }
                _ => (EntryKind::Other, 0, None),
            };
            entries.push(FolderEntry {
                name: utf8.to_owned(),
                kind,
                size_bytes,
                modified_ns,
            });
        }
        Ok(entries)
    }

    /// The first `max_bytes` (at most 1 MiB) of the file at sandbox path `path`, and its size.
    pub(crate) fn read_file_start(
        &mut self,
        path: &str,
        max_bytes: u32,
    ) -> Result<(Vec<u8>, u64), ReadError> {
        let Opened { file, meta } = self.open(OpenFrom::Mounts, path).map_err(read_error)?;
        if !meta.is_file() {
            return Err(ReadError::WrongKind);
        }
        let size = meta.len();
        // No buffer larger than the file: a small file costs a small allocation. (A size of 0 may
        // be a file whose size the filesystem does not know, so it is read as far as asked.)
        let want = match size {
            0 => u64::from(max_bytes),
            known => known.min(u64::from(max_bytes)),
        };
        let (bytes, _) = read_at(&file, want, 0, Some(size)).map_err(|_| ReadError::Other)?;
        Ok((bytes, size))
    }
}

/// What the bulk reads answer for an open the guard refused.
fn read_error(denied: Denied) -> ReadError {
    match denied {
        Denied::Os(e) => match Errno::from_io_error(&e) {
            Some(Errno::NOENT | Errno::NOTDIR) => ReadError::NotFound,
            // A symbolic link, or a way out of the mount; a socket, or a device without a driver.
            Some(Errno::LOOP | Errno::XDEV | Errno::NXIO | Errno::NODEV) => ReadError::Refused,
            _ => ReadError::Other,
        },
        // Quarry's own; a FIFO, socket or device (never read); a path outside the mounts or not
        // made of plain names.
        Denied::Protected | Denied::NotRegular | Denied::NotPlain => ReadError::Refused,
    }
}
