//! The granted folders as the sandbox mounts them: the handle, real path and sandbox path of
//! each, learnt once an instance's WASI context is made.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime_wasi::filesystem::{Descriptor, Dir, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::preopens::Host as PreopensHost;

/// The granted folders' own descriptors (the sandbox's preopens), each with its real path as the
/// kernel named it when the instance was made. An open relative to one of them, through plain
/// names and no symlink (the kernel refuses any other), reaches that real path joined with the
/// names: its real path needs no asking of the kernel.
///
/// A descriptor is recognised by identity (the shared handle wasmtime-wasi clones for each
/// `get-directories`), never by number or inode, so a folder opened later under the same number
/// or reached under another name is not taken for a mount.
#[derive(Default)]
pub(crate) struct MountDirs {
    dirs: Vec<Mount>,
}

/// A granted folder as the sandbox mounts it.
pub(crate) struct Mount {
    /// Its handle's address: compared, never followed.
    handle: usize,
    /// The handle, for the opens below it.
    pub(crate) dir: Arc<std::fs::File>,
    /// Where the kernel says it is.
    pub(crate) real: PathBuf,
    /// Where the guest sees it (`/folder`).
    pub(crate) guest: String,
}

impl MountDirs {
    /// The preopens of a WASI context (`wasi`): each one's handle, real path and path in the
    /// sandbox.
    pub(crate) fn learn(wasi: &mut WasiFilesystemCtxView<'_>) -> wasmtime::Result<MountDirs> {
        let preopens = PreopensHost::get_directories(wasi)?;
        let mut dirs = Vec::with_capacity(preopens.len());
        for (resource, guest) in preopens {
            if let Descriptor::Dir(dir) = wasi.table.get(&resource)?
                && let Ok(real) =
                    std::fs::read_link(format!("/proc/self/fd/{}", dir.dir.as_raw_fd()))
            {
                dirs.push(Mount {
                    handle: Arc::as_ptr(&dir.dir).addr(),
                    dir: Arc::clone(&dir.dir),
                    real,
                    guest,
                });
            }
            wasi.table.delete(resource)?;
        }
        Ok(MountDirs { dirs })
    }

    /// The real path of `dir`, if it is one of the mounts.
    pub(crate) fn real_path(&self, dir: &Dir) -> Option<&Path> {
        let handle = Arc::as_ptr(&dir.dir).addr();
        self.dirs
            .iter()
            .find(|mount| mount.handle == handle)
            .map(|mount| mount.real.as_path())
    }

    /// `real` (a host path) relative to the mount it lies in, as UTF-8.
    pub(crate) fn relative<'p>(&self, real: &'p Path) -> Option<&'p str> {
        self.dirs
            .iter()
            .find_map(|mount| real.strip_prefix(&mount.real).ok())
            .and_then(Path::to_str)
    }

    /// The mount a sandbox path lies in (the longest whose guest path prefixes it, by whole
    /// components), with the rest of the path.
    pub(crate) fn resolve<'p>(&self, path: &'p str) -> Option<(&Mount, &'p str)> {
        self.dirs
            .iter()
            .filter_map(|mount| {
                let base = mount.guest.trim_end_matches('/');
                let rest = path.strip_prefix(base)?;
                match rest.strip_prefix('/') {
                    Some(rest) => Some((mount, rest.trim_end_matches('/'))),
                    None if rest.is_empty() => Some((mount, rest)),
                    None => None,
                }
            })
            .max_by_key(|(mount, _)| mount.guest.len())
    }
}
