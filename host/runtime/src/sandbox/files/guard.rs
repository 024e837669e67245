//! The sandbox's files, stricter than WASI's own:
//!
//! - A plugin opens only regular files and folders. Everything is opened non-blocking and the
//!   opened object itself is checked, so a FIFO (whose open waits for a writer), a socket or a
//!   device never blocks a call and is refused without being read; a file swapped for a FIFO
//!   after it was listed is refused the same way.
//! - Quarry's own folders (data folder, component cache, model, plugin folders, keys) are out of
//!   reach wherever they sit inside a granted folder: what an open reaches is checked by its real
//!   path (and a folder also by its device and inode), and a path through one of them is not
//!   statted. A hard link to one of their files, and any copy of a data folder (known by what it
//!   holds), are refused the same way (`own_files`).
//!
//! wasmtime-wasi's `open-at` and `stat-at` are replaced in the linker by the versions here; the
//! other functions of `wasi:filesystem` act on descriptors that passed through them. `read` is
//! replaced too, for speed alone: it reads on the calling thread, up to 1 MiB at a time, and
//! says when it met the end of the file.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::Metadata;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_fs_ext::{
    FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt, OpenOptionsSyncExt,
};
use cap_primitives::fs::{OpenOptions, OpenOptionsExt};
use rustix::buffer::spare_capacity;
use rustix::fs::AtFlags;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::OpenMode;
use wasmtime_wasi::filesystem::{Descriptor, Dir, File, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::clocks::wall_clock::Datetime;
use wasmtime_wasi::p2::bindings::filesystem::preopens::Host as PreopensHost;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, HostDescriptor, OpenFlags,
    PathFlags,
};
use wasmtime_wasi::runtime::in_tokio;

use crate::host_state::HostState;
use crate::own_files::{OwnFiles, is_data_folder};

/// The `wasi:filesystem/types` instance whose functions are replaced (any 0.2.x a guest imports
/// resolves to it).
const TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Quarry's own folders, which no plugin may read, however a granted folder leads to them.
#[derive(Debug, Clone, Default)]
pub struct ProtectedPaths {
    /// Real paths (symlinks resolved), or the paths as given for those that do not exist yet.
    paths: Vec<PathBuf>,
    /// Device and inode of those that exist: the same folder reached under another name (a bind
    /// mount) is recognised too.
    ids: Vec<(u64, u64)>,
    /// Their files by device and inode: a hard link to one is recognised too.
    own: Arc<OwnFiles>,
}

impl ProtectedPaths {
    /// The folders `paths` (absolute; relative ones are ignored).
    pub fn new(paths: impl IntoIterator<Item = PathBuf>) -> ProtectedPaths {
        let mut protected = ProtectedPaths::default();
        for path in paths.into_iter().filter(|p| p.is_absolute()) {
            let real = path.canonicalize().unwrap_or(path);
            if let Ok(meta) = std::fs::metadata(&real) {
                protected.ids.push((meta.dev(), meta.ino()));
            }
            if !protected.paths.contains(&real) {
                protected.paths.push(real);
            }
        }
        protected.own = Arc::new(OwnFiles::new(protected.paths.clone()));
        protected
    }

    /// The protected folders.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Whether the real path `path` is a protected folder or inside one.
    pub fn covers(&self, path: &Path) -> bool {
        self.paths.iter().any(|p| path.starts_with(p))
    }

    /// Whether the folder `dir` is, or lies inside, a protected folder: by its real path, or
    /// because it or a folder above it is one of them under another name (a bind mount, a second
    /// mount of the same file system), or is a Quarry data folder (a copy of one).
    pub fn covers_folder(&self, dir: &Path) -> bool {
        let Ok(real) = dir.canonicalize() else {
            return false;
        };
        self.covers(&real)
            || real.ancestors().any(|a| {
                std::fs::metadata(a).is_ok_and(|m| self.is_protected_dir(&m)) || is_data_folder(a)
            })
    }

    /// The protected folders inside the real folder `dir` (not `dir` itself): what granting it
    /// leaves out.
    pub fn inside(&self, dir: &Path) -> Vec<PathBuf> {
        self.paths
            .iter()
            .filter(|p| p.starts_with(dir) && p.as_path() != dir)
            .cloned()
            .collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    fn is_protected_dir(&self, meta: &Metadata) -> bool {
        meta.is_dir() && self.ids.contains(&(meta.dev(), meta.ino()))
    }

    /// Whether an opened object is, or lies inside, a protected folder: its real path (the
    /// kernel's name for the open file, whatever links led to it), then the folders on that path
    /// up to one already known to be clear (`clear` remembers them; it starts with the sandbox's
    /// mounts), each by device and inode, so that a protected folder reached under another name
    /// (a bind mount) is recognised too, and each by what it holds, so that a copy of a data
    /// folder is too. A file that is a protected file under another name (a hard link) is
    /// refused. Where the check cannot be made, the open is refused.
    ///
    /// `known` is the object's real path when the open already told it (see [`MountDirs`]);
    /// otherwise the kernel is asked.
    pub(crate) fn refuses(
        &self,
        file: &std::fs::File,
        known: Option<&Path>,
        meta: &Metadata,
        clear: &mut ClearFolders,
    ) -> bool {
        if self.is_empty() {
            return false;
        }
        if self.is_protected_dir(meta) || self.own.is_linked(meta) {
            return true;
        }
        let real = match known {
            Some(real) => Cow::Borrowed(real),
            None => match real_path(file) {
                Some(real) => Cow::Owned(real),
                None => return true,
            },
        };
        if self.covers(&real) {
            return true;
        }
        let mut checked = Vec::new();
        // The folders from the object (or the one holding it) up.
        let folders = real.ancestors().skip(usize::from(!meta.is_dir()));
        for folder in folders {
            if clear.contains(folder) {
                clear.extend(checked);
                return false;
            }
            match std::fs::metadata(folder) {
                Ok(meta) if !self.is_protected_dir(&meta) && !is_data_folder(folder) => {
                    checked.push(folder.to_owned());
                }
                _ => return true,
            }
        }
        true // above every mount: not where a sandbox's file can be
    }
}

/// The kernel's name for an open file (whatever links led to it).
pub(crate) fn real_path(file: &std::fs::File) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

/// Folders known not to be, nor to lie inside, one of Quarry's own: the sandbox's mounts, and
/// the folders found clear since. Bounded: past [`MAX_CLEAR`] it starts again from the mounts.
pub(crate) struct ClearFolders {
    mounts: Vec<PathBuf>,
    known: HashSet<PathBuf>,
}

/// Folders [`ClearFolders`] remembers at most.
const MAX_CLEAR: usize = 50_000;

impl ClearFolders {
    /// Starting with the sandbox's mounts (host folders, already checked).
    pub(crate) fn new(mounts: Vec<PathBuf>) -> ClearFolders {
        let mounts: Vec<PathBuf> = mounts
            .into_iter()
            .map(|m| m.canonicalize().unwrap_or(m))
            .collect();
        ClearFolders {
            known: mounts.iter().cloned().collect(),
            mounts,
        }
    }

    fn contains(&self, folder: &Path) -> bool {
        self.known.contains(folder)
    }

    fn extend(&mut self, folders: Vec<PathBuf>) {
        if self.known.len() + folders.len() > MAX_CLEAR {
            self.known = self.mounts.iter().cloned().collect();
        }
        self.known.extend(folders);
    }
}

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
    /// The handle, for the host's own reads below it (`bulk_reads`).
    pub(crate) dir: Arc<std::fs::File>,
    /// Where the kernel says it is.
    pub(crate) real: PathBuf,
    /// Where the guest sees it (`/folder`).
    pub(crate) guest: String,
}

impl MountDirs {
    /// Learns the preopens of `state`'s WASI context: each one's handle, real path and path in
    /// the sandbox.
    pub(crate) fn learn(state: &mut HostState) -> wasmtime::Result<()> {
        let preopens = PreopensHost::get_directories(&mut state.filesystem())?;
        let mut dirs = Vec::with_capacity(preopens.len());
        for (resource, guest) in preopens {
            if let Descriptor::Dir(dir) = state.table.get(&resource)?
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
            state.table.delete(resource)?;
        }
        state.mounts = MountDirs { dirs };
        Ok(())
    }

    /// The real path of `dir`, if it is one of the mounts.
    fn real_path(&self, dir: &Dir) -> Option<&Path> {
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

/// Replaces `open-at`, `stat-at` and `read` of `wasi:filesystem/types` in `linker` (which must
/// already hold wasmtime-wasi's).
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(TYPES)?;
    types.func_wrap(
        "[method]descriptor.open-at",
        |mut store: StoreContextMut<'_, HostState>,
         (fd, path_flags, path, open_flags, flags): (
            Resource<Descriptor>,
            PathFlags,
            String,
            OpenFlags,
            DescriptorFlags,
        )| {
            let state = store.data_mut();
            let opened = match open(state, &fd, path_flags, &path, open_flags, flags)? {
                Ok((descriptor, size)) => {
                    let opened = state.table.push(descriptor)?;
                    state.opened.record(&opened, size);
                    Ok(opened)
                }
                Err(denied) => Err(denied.code()),
            };
            Ok((opened,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.stat-at",
        |mut store: StoreContextMut<'_, HostState>,
         (fd, path_flags, path): (Resource<Descriptor>, PathFlags, String)| {
            Ok((stat_at(store.data_mut(), fd, path_flags, path)?,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.read",
        |mut store: StoreContextMut<'_, HostState>,
         (fd, len, offset): (Resource<Descriptor>, u64, u64)| {
            let state = store.data_mut();
            let read = match state.table.get(&fd)? {
                Descriptor::File(file) => {
                    read_at(&file.file, len, offset, state.opened.size_of(&fd))
                }
                Descriptor::Dir(_) => Err(ErrorCode::BadDescriptor),
            };
            Ok((read,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The most one `read` answers: a whole file of up to this size costs one call, and the host
/// never holds more than this for one read.
const MAX_READ_BYTES: u64 = 1 << 20;

/// The size of each file the guest opened, as it was at the open (which statted it anyway), by
/// its descriptor's handle. Every file descriptor of a sandbox comes from the guarded open, which
/// records its size under the handle it gets, so the entry for a file's handle is its own even
/// when the handle was another's before; the entries are as many as the handles the resource
/// table ever used at once.
#[derive(Default)]
pub(crate) struct OpenedSizes(HashMap<u32, u64>);

impl OpenedSizes {
    fn record(&mut self, opened: &Resource<Descriptor>, size: Option<u64>) {
        match size {
            Some(size) => self.0.insert(opened.rep(), size),
            None => self.0.remove(&opened.rep()),
        };
    }

    fn size_of(&self, file: &Resource<Descriptor>) -> Option<u64> {
        self.0.get(&file.rep()).copied()
    }
}

/// `read`: up to `len` bytes (at most [`MAX_READ_BYTES`]) at `offset`, on the calling thread,
/// without wasmtime-wasi's detour through an async runtime. It reads until it has `len` bytes or
/// the file ends, and says `true` when it met the end (with the last bytes, as WASI allows), so a
/// file smaller than `len` costs the guest one call. Bytes land in the buffer unzeroed.
///
/// `size` is the file's size when it was opened: a read that got fewer bytes than it asked for
/// and stopped exactly there has met the end of the file, with no empty read to prove it (a
/// file that grew since would have given more; one whose filesystem answers short reads
/// anywhere else is read on).
pub(crate) fn read_at(
    file: &std::fs::File,
    len: u64,
    offset: u64,
    size: Option<u64>,
) -> Result<(Vec<u8>, bool), ErrorCode> {
    let want = usize::try_from(len.min(MAX_READ_BYTES)).unwrap_or(0);
    let mut buffer = Vec::with_capacity(want);
    // As wasmtime-wasi: an empty read says "end".
    let mut end = want == 0;
    while buffer.len() < want {
        let at = offset.saturating_add(buffer.len() as u64);
        let asked = want - buffer.len();
        match rustix::io::pread(file, spare_capacity(&mut buffer), at) {
            Ok(0) => {
                end = true;
                break;
            }
            Ok(got) if got < asked && Some(at.saturating_add(got as u64)) == size => {
                end = true;
                break;
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                // A filesystem that honours non-blocking opens for files (see `open`): this file
                // reads blocking from now on.
                rustix::fs::fcntl_setfl(file, rustix::fs::OFlags::empty())
                    .map_err(|e| ErrorCode::from(std::io::Error::from(e)))?;
            }
            Err(e) => return Err(ErrorCode::from(std::io::Error::from(e))),
        }
    }
    buffer.truncate(want);
    Ok((buffer, end))
}

/// Why [`open`] gave no descriptor.
enum Denied {
    /// One of Quarry's own folders, or inside one.
    Protected,
    /// A FIFO, socket or device.
    NotRegular,
    /// The system's answer.
    Os(ErrorCode),
}

impl Denied {
    fn code(&self) -> ErrorCode {
        match self {
            Denied::Protected | Denied::NotRegular => ErrorCode::Access,
            Denied::Os(code) => *code,
        }
    }
}

impl From<std::io::Error> for Denied {
    fn from(e: std::io::Error) -> Denied {
        Denied::Os(ErrorCode::from(e))
    }
}

/// Opens `path` relative to the folder descriptor `fd`, read-only, refusing anything of Quarry's
/// own and anything that is not a regular file or a folder. Gives the descriptor and, for a
/// file, its size. The outer error is a trap.
fn open(
    state: &mut HostState,
    fd: &Resource<Descriptor>,
    path_flags: PathFlags,
    path: &str,
    open_flags: OpenFlags,
    flags: DescriptorFlags,
) -> wasmtime::Result<Result<(Descriptor, Option<u64>), Denied>> {
    let Descriptor::Dir(dir) = state.table.get(fd)? else {
        return Ok(Err(Denied::Os(ErrorCode::NotDirectory)));
    };
    let writes = open_flags.intersects(OpenFlags::CREATE | OpenFlags::TRUNCATE)
        || flags.intersects(DescriptorFlags::WRITE | DescriptorFlags::MUTATE_DIRECTORY);
    if writes {
        // Every mount is read-only.
        return Ok(Err(Denied::Os(ErrorCode::NotPermitted)));
    }
    let plain = state
        .mounts
        .real_path(dir)
        .and_then(|mount| open_plain(&dir.dir, mount, path));
    let (file, meta, real) = match plain {
        Some(opened) => opened,
        None => match open_resolving(&dir.dir, path_flags, path) {
            Ok((file, meta)) => (file, meta, None),
            Err(e) => return Ok(Err(e.into())),
        },
    };
    if state
        .sandbox
        .protected
        .refuses(&file, real.as_deref(), &meta, &mut state.clear)
    {
        tracing::debug!(plugin = %state.sandbox.plugin, path, "refused: one of Quarry's own folders");
        state.refused_own(real.or_else(|| real_path(&file)));
        return Ok(Err(Denied::Protected));
    }
    if !(meta.is_file() || meta.is_dir()) {
        // A FIFO, socket or device: reading it could block or never end.
        return Ok(Err(Denied::NotRegular));
    }
    if open_flags.contains(OpenFlags::DIRECTORY) && !meta.is_dir() {
        return Ok(Err(Denied::Os(ErrorCode::NotDirectory)));
    }
    // The descriptor stays non-blocking: Linux ignores the flag for regular files and folders
    // (WASI does not show it to the guest), and the read above clears it should a filesystem
    // answer "try again" all the same.
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

/// Opens `path` below the mount `dir` (real path `mount`) when it is made of plain names and
/// crosses no symlink: the kernel refuses a symlink anywhere on the way, and anything outside
/// `dir`. Gives the object, its metadata and its real path; `None` where this cannot tell (a
/// symlink, `..`, any error), for [`open_resolving`] to answer as usual.
fn open_plain(
    dir: &std::fs::File,
    mount: &Path,
    path: &str,
) -> Option<(std::fs::File, Metadata, Option<PathBuf>)> {
    let rel = Path::new(path);
    let plain = !path.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return None;
    }
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let fd = rustix::fs::openat2(
        dir,
        rel,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .ok()?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata().ok()?;
    Some((file, meta, Some(mount.join(rel))))
}

/// Opens `path` below `dir` read-only and non-blocking, resolving symlinks that stay below it as
/// wasmtime-wasi does (and a final one only if `path_flags` says so).
fn open_resolving(
    dir: &std::fs::File,
    path_flags: PathFlags,
    path: &str,
) -> std::io::Result<(std::fs::File, Metadata)> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .maybe_dir(true)
        .follow(if path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
            FollowSymlinks::Yes
        } else {
            FollowSymlinks::No
        })
        // Non-blocking: opening a FIFO for reading returns at once instead of waiting for a
        // writer. No controlling terminal, whatever the object is.
        .nonblock(true)
        .custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32);
    let file = cap_primitives::fs::open(dir, Path::new(path), &options)?;
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// `stat-at`, kept from reaching inside Quarry's own folders: a path through other folders has
/// its parent resolved by the guarded [`open`] first, and a symlink that is followed has its
/// target checked the same way. A plain name inside `fd` (the common case, one system call) is
/// statted as wasmtime-wasi does.
fn stat_at(
    state: &mut HostState,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    path: String,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    if state.sandbox.protected.is_empty() {
        return delegate_stat(state, fd, path_flags, path);
    }
    let Some((parent, name)) = split_parent(&path) else {
        return stat_name(state, fd, path_flags, path);
    };
    let parent = match open(
        state,
        &fd,
        PathFlags::SYMLINK_FOLLOW,
        parent,
        OpenFlags::DIRECTORY,
        DescriptorFlags::READ,
    )? {
        Ok((descriptor, _)) => state.table.push(descriptor)?,
        Err(denied) => return Ok(Err(denied.code())),
    };
    let handle = Resource::new_borrow(parent.rep());
    let stat = stat_name(state, handle, path_flags, name.to_owned());
    state.table.delete(parent)?;
    stat
}

/// Stats a name inside the checked folder `fd`; a symlink it follows must not lead into one of
/// Quarry's own folders.
fn stat_name(
    state: &mut HostState,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    name: String,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    if !path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
        return lstat(state, fd, name);
    }
    let handle = Resource::new_borrow(fd.rep());
    match lstat(state, handle, name.clone())? {
        Ok(stat) if stat.type_ != DescriptorType::SymbolicLink => return Ok(Ok(stat)),
        Err(code) => return Ok(Err(code)),
        Ok(_) => {}
    }
    let target = open(
        state,
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
        Err(Denied::NotRegular | Denied::Os(_)) => {}
    }
    delegate_stat(state, fd, path_flags, name)
}

/// Stats `name` in the folder `fd` without following a final symlink: a plain name with one
/// system call on the calling thread (a listing stats every file), anything else as
/// wasmtime-wasi does.
fn lstat(
    state: &mut HostState,
    fd: Resource<Descriptor>,
    name: String,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    let plain = !matches!(name.as_str(), "" | "." | "..") && !name.contains('/');
    if plain && let Descriptor::Dir(dir) = state.table.get(&fd)? {
        let stat = rustix::fs::statat(&*dir.dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW);
        return Ok(stat
            .map(|stat| descriptor_stat(&stat))
            .map_err(|e| ErrorCode::from(std::io::Error::from(e))));
    }
    delegate_stat(state, fd, PathFlags::empty(), name)
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

/// Nanoseconds since the Unix epoch of a time the system gave in seconds and nanoseconds; none
/// before 1970 (or past the year 2554).
pub(crate) fn timestamp_ns(seconds: i64, nanoseconds: u64) -> Option<u64> {
    u64::try_from(seconds)
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(nanoseconds)
}

/// wasmtime-wasi's own `stat-at`.
fn delegate_stat(
    state: &mut HostState,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    path: String,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    let mut view = state.filesystem();
    match in_tokio(HostDescriptor::stat_at(&mut view, fd, path_flags, path)) {
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

    #[test]
    fn a_read_answers_at_most_one_mebibyte_and_says_when_it_met_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("file");
        std::fs::write(&path, vec![7u8; (1 << 20) + 10]).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let read = |len, offset| read_at(&file, len, offset, None).expect("reads");

        let (bytes, end) = read(u64::MAX, 0);
        assert_eq!((bytes.len(), end), (1 << 20, false));
        assert!(bytes.iter().all(|&b| b == 7));
        assert_eq!(read(u64::MAX, 1 << 20).0.len(), 10);
        assert!(
            read(u64::MAX, 1 << 20).1,
            "the end, met with the last bytes"
        );
        assert_eq!(read(5, 0).0.len(), 5);
        assert!(!read(5, 0).1);
        assert_eq!(read(5, 1 << 30), (Vec::new(), true));
        assert_eq!(read(0, 0), (Vec::new(), true));

        // With the size the file had when it was opened (the end is then known without an empty
        // read), every answer is the same, also when that size is out of date.
        let size = (1 << 20) + 10;
        for believed in [size, size - 5, size + 5, 0] {
            for (len, offset) in [(u64::MAX, 0), (u64::MAX, 1 << 20), (5, 0), (20, size - 10)] {
                assert_eq!(
                    read_at(&file, len, offset, Some(believed)).expect("reads"),
                    read(len, offset),
                    "believed {believed}, read {len} at {offset}"
                );
            }
        }
    }

    #[test]
    fn protected_paths_cover_what_lies_inside() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        std::fs::create_dir(&data).expect("mkdir");
        let protected = ProtectedPaths::new([data.clone(), PathBuf::from("relative/ignored")]);
        let real = data.canonicalize().expect("real path");
        assert_eq!(protected.paths(), std::slice::from_ref(&real));
        assert!(protected.covers(&real.join("quarry.db")));
        assert!(protected.covers(&real));
        assert!(!protected.covers(&real.with_file_name("data-other")));
        let root = dir.path().canonicalize().expect("real path");
        assert_eq!(protected.inside(&root), std::slice::from_ref(&real));
        assert!(protected.inside(&real).is_empty());
    }
}
