//! A guest's `open-at` as a WASI descriptor: writes refused (every mount is read-only), the path
//! opened by the guarded open, `DIRECTORY` checked, and the descriptor made, with the file's size
//! for `read`.

use wasmtime::component::Resource;
use wasmtime_wasi::OpenMode;
use wasmtime_wasi::filesystem::{Descriptor, Dir, File};
use wasmtime_wasi::p2::bindings::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};

use super::guard::{Denied, FilesView, OpenFrom, Opened};

/// Opens `path` relative to the folder descriptor `fd` through the guarded open. Gives the
/// descriptor and, for a file, its size. The outer error is a trap.
pub(crate) fn open_descriptor(
    view: &mut FilesView<'_>,
    fd: &Resource<Descriptor>,
    path_flags: PathFlags,
    path: &str,
    open_flags: OpenFlags,
    flags: DescriptorFlags,
) -> wasmtime::Result<Result<(Descriptor, Option<u64>), Denied>> {
    let Descriptor::Dir(dir) = view.wasi.table.get(fd)? else {
        return Ok(Err(rustix::io::Errno::NOTDIR.into()));
    };
    let writes = open_flags.intersects(OpenFlags::CREATE | OpenFlags::TRUNCATE)
        || flags.intersects(DescriptorFlags::WRITE | DescriptorFlags::MUTATE_DIRECTORY);
    if writes {
        return Ok(Err(rustix::io::Errno::PERM.into()));
    }
    let follow = path_flags.contains(PathFlags::SYMLINK_FOLLOW);
    let Opened { file, meta } = match view.guard.open(OpenFrom::Folder { dir, follow }, path) {
        Ok(opened) => opened,
        Err(denied) => return Ok(Err(denied)),
    };
    if open_flags.contains(OpenFlags::DIRECTORY) && !meta.is_dir() {
        return Ok(Err(rustix::io::Errno::NOTDIR.into()));
    }
    // The descriptor stays non-blocking: Linux ignores the flag for regular files and folders
    // (WASI does not show it to the guest), and `read` clears it should a filesystem answer
    // "try again" all the same.
    let (perms, blocking) = (dir.perms, true);
    Ok(Ok(if meta.is_dir() {
        (
            Descriptor::Dir(Dir::new(file, perms, OpenMode::READ, blocking)),
            None,
        )
    } else {
        (
            Descriptor::File(File::new(file, perms, OpenMode::READ, blocking)),
            Some(meta.len()),
        )
    }))
}
