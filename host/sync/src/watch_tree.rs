//! Which folders of a granted tree are watched: every folder reached from the granted folder
//! without following a link, without entering another mount (a mount or a bind mount inside the
//! tree, which may show any folder of the machine, Quarry's own among them), and without
//! entering a protected folder (Quarry's data folder and caches), known by its identity (device
//! and inode) whatever path reaches it. A watch placed only on these folders never sees a sync's
//! own writes.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A folder's identity: the same through every path (a link, a bind mount) that reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
}

/// The identity of the file or folder at `path` (links not followed).
pub(crate) fn identity(path: &Path) -> Option<Identity> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(Identity {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// The mount a folder is on: its mount id where the kernel gives it (a bind mount has its own,
/// though it shows the same device), else its device.
fn mount_of(path: &Path) -> Option<u64> {
    use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
    match statx(CWD, path, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::MNT_ID) {
        Ok(stat) if StatxFlags::from_bits_retain(stat.stx_mask).contains(StatxFlags::MNT_ID) => {
            Some(stat.stx_mnt_id)
        }
        _ => std::fs::symlink_metadata(path).ok().map(|m| m.dev()),
    }
}

/// The folders under `root` (itself included) to watch, none of them `protected`; at most
/// `limit` of them (a tree larger than that is cut, and said so by `false`). An error when
/// `root` is not a folder.
pub(crate) fn folders(
    root: &Path,
    protected: &[Identity],
    limit: usize,
) -> std::io::Result<(Vec<PathBuf>, bool)> {
    let mut found = Vec::new();
    if !std::fs::symlink_metadata(root)?.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a folder",
            root.display()
        )));
    }
    let Some(mount) = mount_of(root) else {
        return Ok((found, true));
    };
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if identity(&dir).is_some_and(|id| protected.contains(&id)) || mount_of(&dir) != Some(mount)
        {
            continue;
        }
        if found.len() == limit {
            return Ok((found, false));
        }
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                // The entry's own type: a link to a folder is a link, not a folder.
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(entry.path());
                }
            }
        }
        found.push(dir);
    }
    Ok((found, true))
}

/// Whether `dir`, a folder that appeared in a watched tree whose root is on `root`'s mount, is
/// to be watched (with what it holds): not a link, not another mount, not protected.
pub(crate) fn admits(root: &Path, dir: &Path, protected: &[Identity]) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        && !identity(dir).is_some_and(|id| protected.contains(&id))
        && mount_of(dir).is_some_and(|mount| Some(mount) == mount_of(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_protected_folders_are_left_out_of_the_tree() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("granted");
        let data = root.join("inside/quarry-data");
        std::fs::create_dir_all(data.join("index")).expect("mkdir");
        std::fs::create_dir_all(root.join("notes/2026")).expect("mkdir");
        std::os::unix::fs::symlink(dir.path(), root.join("up")).expect("link");
        let protected = [identity(&data).expect("identity")];
        let (folders, whole) = folders(&root, &protected, 100).expect("a folder");
        assert!(whole);
        let mut names: Vec<String> = folders
            .iter()
            .map(|f| {
                f.strip_prefix(&root)
                    .expect("under root")
                    .display()
                    .to_string()
            })
            .collect();
        names.sort();
        assert_eq!(names, ["", "inside", "notes", "notes/2026"]);
        assert!(!admits(&root, &root.join("up"), &protected));
        assert!(!admits(&root, &data, &protected));
        assert!(admits(&root, &root.join("notes"), &protected));
        let (cut, whole) = super::folders(&root, &protected, 2).expect("a folder");
        assert_eq!((cut.len(), whole), (2, false));
    }

    #[test]
    fn another_mount_in_the_tree_is_not_entered() {
        // `/proc` is a mount of its own on every Linux.
        assert!(!admits(Path::new("/"), Path::new("/proc"), &[]));
        let (folders, _) = super::folders(Path::new("/"), &[], 64).expect("a folder");
        assert!(
            !folders.iter().any(|f| f.starts_with("/proc")),
            "{folders:?}"
        );
    }
}
