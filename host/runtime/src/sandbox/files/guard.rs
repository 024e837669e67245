//! The one guarded open: every path a plugin opens, through WASI (`open-at`, and the parents and
//! link targets `stat-at` resolves) or through Quarry's bulk reads (`read-folder`,
//! `read-file-start`), is opened here, read-only and non-blocking, and refused when it is one of
//! Quarry's own (`policy::protected`) or anything but a regular file or a folder. A FIFO, socket
//! or device is refused without being read, so it never blocks a call; a file swapped for one
//! after it was listed is refused the same way.
//!
//! [`FileGuard`] is the instance's file state the opens need: the mounts, the folders known to
//! be clear, the sizes of opened files, and the files refused as Quarry's own.

use std::fs::Metadata;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_fs_ext::{
    FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt, OpenOptionsSyncExt,
};
use cap_primitives::fs::{OpenOptions, OpenOptionsExt};
use rustix::fs::{Mode, OFlags, ResolveFlags};
use wasmtime_wasi::filesystem::{Dir, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

use super::mounts::MountDirs;
use super::read::OpenedSizes;
use crate::policy::protected::{ClearFolders, ProtectedPaths, real_path};

/// Files refused as Quarry's own an instance remembers at most between two looks.
const MAX_REFUSED_OWN: usize = 1024;

/// The file state of one instance.
pub(crate) struct FileGuard {
    /// The plugin's id, for the log.
    plugin: Arc<str>,
    /// Quarry's own folders, out of reach of every open.
    protected: Arc<ProtectedPaths>,
    /// Folders known to lie outside Quarry's own.
    clear: ClearFolders,
    /// The granted folders' descriptors and real paths (learnt once the context is made).
    pub(crate) mounts: MountDirs,
    /// The size of each file opened, as it was when it was opened.
    pub(crate) opened: OpenedSizes,
    /// Files refused as Quarry's own since the session last asked, relative to their mount.
    refused_own: Vec<String>,
}

/// What WASI's file shadows see of an instance: wasmtime-wasi's filesystem context with the
/// resource table, and the guard.
pub(crate) struct FilesView<'a> {
    pub(crate) wasi: WasiFilesystemCtxView<'a>,
    pub(crate) guard: &'a mut FileGuard,
}

/// Where a path to open starts.
pub(crate) enum OpenFrom<'a> {
    /// A folder descriptor of the guest's (WASI): a path of plain names below a mount is opened
    /// as [`OpenFrom::Mounts`] opens it; any other path resolves symlinks that stay below the
    /// folder, as wasmtime-wasi does (a final one only when `follow`).
    Folder { dir: &'a Dir, follow: bool },
    /// The sandbox's root (the bulk reads): the path must lie in a mount and be made of plain
    /// names (no `..`, no `.`), and no symlink may be on the way (the kernel checks).
    Mounts,
}

/// An object the guard let through: a regular file or a folder.
pub(crate) struct Opened {
    pub(crate) file: std::fs::File,
    pub(crate) meta: Metadata,
}

/// Why the guarded open gave nothing.
#[derive(Debug)]
pub(crate) enum Denied {
    /// One of Quarry's own folders or files, or inside one.
    Protected,
    /// A FIFO, socket or device.
    NotRegular,
    /// A sandbox path outside every mount, or not made of plain names ([`OpenFrom::Mounts`]).
    NotPlain,
    /// The system's answer.
    Os(std::io::Error),
}

impl Denied {
    /// The WASI error the guest gets.
    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            Denied::Protected | Denied::NotRegular | Denied::NotPlain => ErrorCode::Access,
            Denied::Os(e) => ErrorCode::from(e),
        }
    }
}

impl From<std::io::Error> for Denied {
    fn from(e: std::io::Error) -> Denied {
        Denied::Os(e)
    }
}

impl From<rustix::io::Errno> for Denied {
    fn from(e: rustix::io::Errno) -> Denied {
        Denied::Os(e.into())
    }
}

impl FileGuard {
    /// The file state of an instance of `plugin` that mounts the host folders `mounts` (already
    /// checked: they start out known to be clear).
    pub(crate) fn new(
        plugin: Arc<str>,
        protected: Arc<ProtectedPaths>,
        mounts: Vec<PathBuf>,
    ) -> FileGuard {
        FileGuard {
            plugin,
            protected,
            clear: ClearFolders::new(mounts),
            mounts: MountDirs::default(),
            opened: OpenedSizes::default(),
            refused_own: Vec::new(),
        }
    }

    /// Whether no folder is protected (then a stat needs no check).
    pub(crate) fn protects_nothing(&self) -> bool {
        self.protected.is_empty()
    }

    /// Opens `path` from `from`, read-only and non-blocking, refusing anything of Quarry's own
    /// and anything that is not a regular file or a folder.
    pub(crate) fn open(&mut self, from: OpenFrom<'_>, path: &str) -> Result<Opened, Denied> {
        let (file, meta, real) = match from {
            OpenFrom::Folder { dir, follow } => {
                let plain = self
                    .mounts
                    .real_path(dir)
                    .and_then(|mount| open_plain(&dir.dir, mount, path).ok());
                match plain {
                    Some(opened) => opened,
                    None => {
                        let (file, meta) = open_resolving(&dir.dir, follow, path)?;
                        (file, meta, None)
                    }
                }
            }
            OpenFrom::Mounts => {
                let (mount, rel) = self.mounts.resolve(path).ok_or(Denied::NotPlain)?;
                open_plain(
                    &mount.dir,
                    &mount.real,
                    if rel.is_empty() { "." } else { rel },
                )?
            }
        };
        if self
            .protected
            .refuses(&file, real.as_deref(), &meta, &mut self.clear)
        {
            tracing::debug!(plugin = %self.plugin, path, "refused: one of Quarry's own folders");
            self.note_refused_own(real.or_else(|| real_path(&file)));
            return Err(Denied::Protected);
        }
        if !(meta.is_file() || meta.is_dir()) {
            // A FIFO, socket or device: reading it could block or never end.
            return Err(Denied::NotRegular);
        }
        Ok(Opened { file, meta })
    }

    /// Notes that the file at host path `real` was refused as one of Quarry's own (a hard link
    /// to one, a copy of a data folder): the sync leaves its document out instead of counting a
    /// failure. Kept as the path relative to its mount.
    fn note_refused_own(&mut self, real: Option<PathBuf>) {
        let Some(real) = real else {
            return;
        };
        let relative = self.mounts.relative(&real).map(str::to_owned);
        if let Some(relative) = relative
            && self.refused_own.len() < MAX_REFUSED_OWN
        {
            self.refused_own.push(relative);
        }
    }

    /// The files refused as Quarry's own since the last look, relative to their mount.
    pub(crate) fn take_refused_own(&mut self) -> Vec<String> {
        std::mem::take(&mut self.refused_own)
    }
}

/// Opens `rel` below the mount `dir` (real path `mount`) when it is made of plain names (or is
/// `.`, the mount itself): the kernel refuses a symlink anywhere on the way, and anything outside
/// `dir`. Gives the object, its metadata and its real path.
fn open_plain(
    dir: &std::fs::File,
    mount: &Path,
    rel: &str,
) -> Result<(std::fs::File, Metadata, Option<PathBuf>), Denied> {
    let real = if rel == "." {
        mount.to_owned()
    } else {
        let names = Path::new(rel).components();
        let plain = !rel.is_empty() && names.clone().all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err(Denied::NotPlain);
        }
        mount.join(rel)
    };
    let fd = rustix::fs::openat2(
        dir,
        rel,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata()?;
    Ok((file, meta, Some(real)))
}

/// Opens `path` below `dir` read-only and non-blocking, resolving symlinks that stay below it as
/// wasmtime-wasi does (a final one only when `follow`).
fn open_resolving(
    dir: &std::fs::File,
    follow: bool,
    path: &str,
) -> std::io::Result<(std::fs::File, Metadata)> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .maybe_dir(true)
        .follow(if follow {
            FollowSymlinks::Yes
        } else {
            FollowSymlinks::No
        })
        // Non-blocking: opening a FIFO for reading returns at once instead of waiting for a
        // writer. No controlling terminal, whatever the object is.
        .nonblock(true)
        .custom_flags(OFlags::NOCTTY.bits() as i32);
    let file = cap_primitives::fs::open(dir, Path::new(path), &options)?;
    let meta = file.metadata()?;
    Ok((file, meta))
}
