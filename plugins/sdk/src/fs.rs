//! Read-only file access straight on WASI 0.2 (`wasi:filesystem`), for connectors that walk and
//! read many files.
//!
//! `std::fs` works in a connector too, but on toolchains whose std goes through the WASI
//! preview-1 adapter every stat also computes an inode hash and every path is resolved from the
//! root again. Here a [`Dir`] is an open handle: opening files relative to it is one host call.
//! Listing it with its files' sizes and times ([`Dir::entries`]) and reading the start of a file
//! ([`Dir::read_start`]) are one host call each in all (Quarry's `read-folder` and
//! `read-file-start`, WIT 0.3.0), where WASI takes a call per entry and a stat per file, or an
//! open, a read and a close; where the host cannot answer so (a symbolic link on the way, a
//! folder of more than 100,000 entries), they go through WASI.

use std::io::{self, ErrorKind, Read, Seek, SeekFrom};
use std::rc::Rc;

use wasip2::filesystem::preopens::get_directories;

use crate::bindings::quarry::connector::host;
use crate::bindings::quarry::connector::types::{EntryKind, FolderEntry, ReadError};
use wasip2::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

/// What a directory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// A socket, pipe, device or anything else.
    Other,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's name (one path component).
    pub name: String,
    /// What it is; symlinks are not followed.
    pub kind: Kind,
    /// For a file, its metadata when the listing told it (see [`Dir::entries`]).
    pub stat: Option<Stat>,
}

/// Metadata of a file or directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// What it is.
    pub kind: Kind,
    /// Size in bytes.
    pub size: u64,
    /// Last modification, nanoseconds since the Unix epoch, if the file system keeps it.
    pub modified_ns: Option<u128>,
}

impl Stat {
    /// Last modification in milliseconds since the Unix epoch (0 when unknown).
    pub fn modified_ms(&self) -> i64 {
        self.modified_ns
            .map_or(0, |ns| i64::try_from(ns / 1_000_000).unwrap_or(i64::MAX))
    }
}

/// An open directory.
pub struct Dir {
    /// Shared with the instance's list of granted folders when this is one of them.
    desc: Rc<Descriptor>,
    /// Where it is in the sandbox (`/folder/notes`), made of the plain names it was opened by.
    path: String,
}

thread_local! {
    /// The granted folders, asked of the host once per instance: they do not change while it
    /// lives, and each asking would make (and drop) a handle per folder.
    static GRANTED: Vec<(Rc<Descriptor>, String)> = get_directories()
        .into_iter()
        .map(|(desc, mount)| (Rc::new(desc), mount))
        .collect();
}

impl Dir {
    /// Opens the directory at `path`, an absolute path in the sandbox (`/folder/notes`): the
    /// granted folder it lies in, then the rest relative to that.
    pub fn open(path: &str) -> io::Result<Dir> {
        let path = path.trim_end_matches('/');
        let best = GRANTED.with(|granted| {
            let mut best: Option<(Rc<Descriptor>, usize)> = None;
            for (desc, mount) in granted {
                let mount_len = mount.trim_end_matches('/').len();
                let inside = path.starts_with(mount.trim_end_matches('/'))
                    && matches!(path.as_bytes().get(mount_len), None | Some(b'/'));
                if inside && best.as_ref().is_none_or(|(_, len)| mount_len > *len) {
                    best = Some((Rc::clone(desc), mount_len));
                }
            }
            best
        });
        let Some((desc, mount_len)) = best else {
            return Err(io::Error::new(
                ErrorKind::NotFound,
                format!("{path} is not inside a folder granted to this connector"),
            ));
        };
        let rest = path[mount_len..].trim_start_matches('/');
        let root = Dir {
            desc,
            path: path[..mount_len].to_owned(),
        };
        if rest.is_empty() {
            Ok(root)
        } else {
            root.open_dir(rest)
        }
    }

    /// The entries of this directory, in the order the file system gives them, each file with
    /// its metadata when the host tells it with the listing (one call for the whole directory;
    /// otherwise the listing goes through WASI, and [`Dir::stat`] tells a file's).
    pub fn entries(&self) -> io::Result<Vec<Entry>> {
        if let Ok(entries) = host::read_folder(&self.path) {
            return Ok(entries.into_iter().map(entry).collect());
        }
        let stream = self.desc.read_directory().map_err(error)?;
        let mut entries = Vec::new();
        while let Some(entry) = stream.read_directory_entry().map_err(error)? {
            entries.push(Entry {
                name: entry.name,
                kind: kind(entry.type_),
                stat: None,
            });
        }
        Ok(entries)
    }

    /// The first `max_bytes` of the file `rel` (a relative path; symlinks followed, staying
    /// inside the granted folder) with its size in bytes: the whole file when it is no larger.
    /// One host call when the host can answer so, else an open, a stat and a read through WASI.
    pub fn read_start(&self, rel: &str, max_bytes: u32) -> io::Result<(Vec<u8>, u64)> {
        match host::read_file_start(&format!("{}/{rel}", self.path), max_bytes) {
            Ok(read) => Ok(read),
            Err(ReadError::NotFound) => Err(io::Error::new(
                ErrorKind::NotFound,
                format!("{rel}: no such file"),
            )),
            // A symbolic link on the way, or anything the host would not read so: WASI says.
            Err(_) => {
                let file = self.open_file(rel)?;
                let size = file.stat()?.size;
                Ok((file.read_at(0, u64::from(max_bytes))?, size))
            }
        }
    }

    /// Metadata of `rel` (a relative path), without following a final symlink.
    pub fn stat(&self, rel: &str) -> io::Result<Stat> {
        self.desc
            .stat_at(PathFlags::empty(), rel)
            .map(stat)
            .map_err(error)
    }

    /// Metadata of `rel`, following symlinks (which must stay inside the granted folder).
    pub fn stat_follow(&self, rel: &str) -> io::Result<Stat> {
        self.desc
            .stat_at(PathFlags::SYMLINK_FOLLOW, rel)
            .map(stat)
            .map_err(error)
    }

    /// Opens the directory `rel` (a relative path), without following symlinks.
    pub fn open_dir(&self, rel: &str) -> io::Result<Dir> {
        let desc = self
            .desc
            .open_at(
                PathFlags::empty(),
                rel,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map_err(error)?;
        Ok(Dir {
            desc: Rc::new(desc),
            path: format!("{}/{}", self.path, rel.trim_matches('/')),
        })
    }

    /// Opens the file `rel` (a relative path) for reading, following symlinks (which must stay
    /// inside the granted folder).
    pub fn open_file(&self, rel: &str) -> io::Result<File> {
        let desc = self
            .desc
            .open_at(
                PathFlags::SYMLINK_FOLLOW,
                rel,
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )
            .map_err(error)?;
        Ok(File { desc, pos: 0 })
    }
}

/// A file open for reading. Implements [`Read`] and [`Seek`]; reads never move a shared offset.
pub struct File {
    desc: Descriptor,
    pos: u64,
}

impl File {
    /// The file's metadata.
    pub fn stat(&self) -> io::Result<Stat> {
        self.desc.stat().map(stat).map_err(error)
    }

    /// Up to `len` bytes from `offset`; fewer only at the end of the file.
    pub fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let mut out: Vec<u8> = Vec::new();
        while (out.len() as u64) < len {
            let want = len - out.len() as u64;
            let (chunk, end) = self
                .desc
                .read(want, offset + out.len() as u64)
                .map_err(error)?;
            if out.is_empty() {
                out = chunk;
            } else {
                out.extend_from_slice(&chunk);
            }
            if end || out.is_empty() {
                break;
            }
        }
        Ok(out)
    }
}

impl Read for File {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (chunk, _) = self.desc.read(buf.len() as u64, self.pos).map_err(error)?;
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for File {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let base = match to {
            SeekFrom::Start(n) => {
                self.pos = n;
                return Ok(n);
            }
            SeekFrom::Current(delta) => (self.pos, delta),
            SeekFrom::End(delta) => (self.stat()?.size, delta),
        };
        let pos = base.0.checked_add_signed(base.1).ok_or_else(|| {
            io::Error::new(ErrorKind::InvalidInput, "seek before the start of the file")
        })?;
        self.pos = pos;
        Ok(pos)
    }
}

/// An entry as the host's `read-folder` tells it.
fn entry(found: FolderEntry) -> Entry {
    let kind = match found.kind {
        EntryKind::File => Kind::File,
        EntryKind::Folder => Kind::Dir,
        EntryKind::Symlink => Kind::Symlink,
        EntryKind::Other => Kind::Other,
    };
    Entry {
        name: found.name,
        kind,
        stat: (kind == Kind::File).then_some(Stat {
            kind,
            size: found.size_bytes,
            modified_ns: found.modified_ns.map(u128::from),
        }),
    }
}

fn kind(t: DescriptorType) -> Kind {
    match t {
        DescriptorType::RegularFile => Kind::File,
        DescriptorType::Directory => Kind::Dir,
        DescriptorType::SymbolicLink => Kind::Symlink,
        _ => Kind::Other,
    }
}

fn stat(s: DescriptorStat) -> Stat {
    Stat {
        kind: kind(s.type_),
        size: s.size,
        modified_ns: s
            .data_modification_timestamp
            .map(|t| u128::from(t.seconds) * 1_000_000_000 + u128::from(t.nanoseconds)),
    }
}

/// A WASI error code as an `io::Error` of the matching kind.
fn error(code: ErrorCode) -> io::Error {
    let kind = match code {
        ErrorCode::NoEntry => ErrorKind::NotFound,
        ErrorCode::Access | ErrorCode::NotPermitted | ErrorCode::ReadOnly => {
            ErrorKind::PermissionDenied
        }
        ErrorCode::Exist => ErrorKind::AlreadyExists,
        ErrorCode::NotDirectory => ErrorKind::NotADirectory,
        ErrorCode::IsDirectory => ErrorKind::IsADirectory,
        ErrorCode::Invalid | ErrorCode::Loop | ErrorCode::NameTooLong => ErrorKind::InvalidInput,
        ErrorCode::Unsupported => ErrorKind::Unsupported,
        ErrorCode::Interrupted | ErrorCode::WouldBlock => ErrorKind::Interrupted,
        _ => ErrorKind::Other,
    };
    io::Error::new(kind, code.message())
}
