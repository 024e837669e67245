//! `stat-at`, kept from reaching inside Quarry's own folders: the parent of a path through
//! other folders, and the target of a symlink that is followed, pass the guarded open first. A
//! plain name (what a listing stats) costs one system call on the calling thread.

use std::path::{Component, Path};

use rustix::fs::AtFlags;
use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::clocks::wall_clock::Datetime;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, HostDescriptor, OpenFlags,
    PathFlags,
};
use wasmtime_wasi::runtime::in_tokio;

use super::descriptors::open_descriptor;
use super::guard::{Denied, FilesView};

/// `stat-at`, kept from reaching inside Quarry's own folders: a path through other folders has
/// its parent resolved by the guarded open first, and a symlink that is followed has its
/// target checked the same way. A plain name inside `fd` (the common case, one system call) is
/// statted as wasmtime-wasi does.
pub(crate) fn stat_at(
    view: &mut FilesView<'_>,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    path: String,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    if view.guard.protects_nothing() {
        return delegate_stat(view, fd, path_flags, path);
    }
    let Some((parent, name)) = split_parent(&path) else {
        return stat_name(view, fd, path_flags, path);
    };
    let parent = match open_descriptor(
        view,
        &fd,
        PathFlags::SYMLINK_FOLLOW,
        parent,
        OpenFlags::DIRECTORY,
        DescriptorFlags::READ,
    )? {
        Ok((descriptor, _)) => view.wasi.table.push(descriptor)?,
        Err(denied) => return Ok(Err(denied.code())),
    };
    let handle = Resource::new_borrow(parent.rep());
    let stat = stat_name(view, handle, path_flags, name.to_owned());
    view.wasi.table.delete(parent)?;
    stat
}

/// Stats a name inside the checked folder `fd`; a symlink it follows must not lead into one of
/// Quarry's own folders.
fn stat_name(
    view: &mut FilesView<'_>,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    name: String,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    if !path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
        return lstat(view, fd, name);
    }
    let handle = Resource::new_borrow(fd.rep());
    match lstat(view, handle, name.clone())? {
        Ok(stat) if stat.type_ != DescriptorType::SymbolicLink => return Ok(Ok(stat)),
        Err(code) => return Ok(Err(code)),
        Ok(_) => {}
    }
    let target = open_descriptor(
        view,
        &fd,
        PathFlags::SYMLINK_FOLLOW,
        &name,
        OpenFlags::empty(),
        DescriptorFlags::READ,
    )?;
    match target {
        Ok((descriptor, _)) => drop(descriptor),
        Err(Denied::Protected) => return Ok(Err(ErrorCode::Access)),
        // Not readable, or not a regular file: then not one of Quarry's own either.
        Err(_) => {}
    }
    delegate_stat(view, fd, path_flags, name)
}

/// Stats `name` in the folder `fd` without following a final symlink: a plain name with one
/// system call on the calling thread (a listing stats every file), anything else as
/// wasmtime-wasi does.
fn lstat(
    view: &mut FilesView<'_>,
    fd: Resource<Descriptor>,
    name: String,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    let plain = !matches!(name.as_str(), "" | "." | "..") && !name.contains('/');
    if plain && let Descriptor::Dir(dir) = view.wasi.table.get(&fd)? {
        let stat = rustix::fs::statat(&*dir.dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW);
        return Ok(stat
            .map(|stat| descriptor_stat(&stat))
            .map_err(|e| ErrorCode::from(std::io::Error::from(e))));
    }
    delegate_stat(view, fd, PathFlags::empty(), name)
}

/// What WASI says of a file the system statted, as wasmtime-wasi says it.
fn descriptor_stat(stat: &rustix::fs::Stat) -> DescriptorStat {
    use rustix::fs::FileType;
    let time = |seconds: i64, nanoseconds: u64| {
        Some(Datetime {
            seconds: u64::try_from(seconds).ok()?,
            nanoseconds: u32::try_from(nanoseconds).ok()?,
        })
    };
    DescriptorStat {
        type_: match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => DescriptorType::RegularFile,
            FileType::Directory => DescriptorType::Directory,
            FileType::Symlink => DescriptorType::SymbolicLink,
            FileType::Fifo => DescriptorType::Fifo,
            FileType::Socket => DescriptorType::Socket,
            FileType::CharacterDevice => DescriptorType::CharacterDevice,
            FileType::BlockDevice => DescriptorType::BlockDevice,
            FileType::Unknown => DescriptorType::Unknown,
        },
        link_count: stat.st_nlink,
        size: u64::try_from(stat.st_size).unwrap_or(0),
        data_access_timestamp: time(stat.st_atime, stat.st_atime_nsec),
        data_modification_timestamp: time(stat.st_mtime, stat.st_mtime_nsec),
        status_change_timestamp: time(stat.st_ctime, stat.st_ctime_nsec),
    }
}

/// wasmtime-wasi's own `stat-at`.
fn delegate_stat(
    view: &mut FilesView<'_>,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    path: String,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    match in_tokio(HostDescriptor::stat_at(
        &mut view.wasi,
        fd,
        path_flags,
        path,
    )) {
        Ok(stat) => Ok(Ok(stat)),
        Err(error) => error.downcast().map(Err),
    }
}

/// `a/b/c` as (`a/b`, `c`); `None` for a single name. Only paths with more than one component
/// need the parent resolved.
fn split_parent(path: &str) -> Option<(&str, &str)> {
    let trimmed = path.trim_end_matches('/');
    let (parent, name) = trimmed.rsplit_once('/')?;
    let parent = if parent.is_empty() { "/" } else { parent };
    let plain = Path::new(parent)
        .components()
        .any(|c| !matches!(c, Component::CurDir));
    plain.then_some((parent, if name.is_empty() { "." } else { name }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_through_folders_are_split() {
        assert_eq!(split_parent("a.txt"), None);
        assert_eq!(split_parent("./a.txt"), None);
        assert_eq!(split_parent("q/quarry.db"), Some(("q", "quarry.db")));
        assert_eq!(split_parent("a/b/c/"), Some(("a/b", "c")));
        assert_eq!(split_parent("a/../q/x"), Some(("a/../q", "x")));
    }
}
