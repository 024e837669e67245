//! Quarry's own folders (data folder, component cache, model, plugin folders, keys), which no
//! plugin reads however a granted folder leads to them: by real path, by device and inode (the
//! same folder under another name, a bind mount), by what a folder holds (a copy of a data
//! folder) and, for files, by device and inode (a hard link, `own_files`). The sandbox's one
//! guarded open (`sandbox/files/guard.rs`) asks [`ProtectedPaths::refuses`] of everything it
//! opens; a grant asks [`ProtectedPaths::covers_folder`] of the folder it names.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs::Metadata;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::policy::own_files::{OwnFiles, is_data_folder};

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
    /// `known` is the object's real path when the open already told it (a path of plain names
    /// below a mount); otherwise the kernel is asked.
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

#[cfg(test)]
mod tests {
    use super::*;

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
