//! Files Quarry runs or keeps secrets in (compiled plugin code, the model's native library, the
//! data folder) must belong to the user running Quarry (or to root) and be writable by no one
//! else; otherwise another local user could have put code there, or read what is kept there.
//! The files Quarry writes itself are made readable by this user only, whole before anyone can
//! see them.

use std::fs::Metadata;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a new file at `path`, readable and writable by this user only; fails if
/// something is there already (a link included: nothing is written through one).
pub fn write_new_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes `path` a private file holding `bytes` unless it exists already, atomically: whoever
/// reads it sees all of one writer's bytes or no file at all, and of two processes creating it
/// at once one wins. Returns whether this call created it.
pub fn create_private_once(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    let file_name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_os_string());
    // Unique per process and call, so that concurrent writers never share a temporary file.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".{}-{call}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    write_new_private(&tmp, bytes)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Checks that `path` and the folder holding it belong to this user (or root) and that no one
/// else may write to them. The error says what is wrong and how to fix it.
pub fn check_trusted(path: &Path) -> Result<(), String> {
    let real = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let meta = std::fs::metadata(&real).map_err(|e| format!("{}: {e}", real.display()))?;
    owned_and_guarded(&real, &meta)?;
    if let Some(folder) = real.parent() {
        let folder_meta =
            std::fs::metadata(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        owned_and_guarded(folder, &folder_meta)?;
    }
    Ok(())
}

/// Entries a folder checked with [`check_trusted_tree`] may hold, at most.
const MAX_TREE_ENTRIES: usize = 100_000;

/// [`check_trusted`] for a folder and everything in it: every folder and file under `path` (and
/// what each link in it leads to) must belong to this user or root and be writable by no one
/// else. A tree of more than [`MAX_TREE_ENTRIES`] entries is refused too. The error names the
/// first entry that fails and why.
pub fn check_trusted_tree(path: &Path) -> Result<(), String> {
    check_trusted(path)?;
    let mut folders = vec![path.to_owned()];
    let mut seen = 0usize;
    while let Some(folder) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", folder.display()))?;
            seen += 1;
            if seen > MAX_TREE_ENTRIES {
                return Err(format!(
                    "{} holds more than {MAX_TREE_ENTRIES} entries",
                    path.display()
                ));
            }
            let entry_path = entry.path();
            let meta = std::fs::symlink_metadata(&entry_path)
                .map_err(|e| format!("{}: {e}", entry_path.display()))?;
            if meta.file_type().is_symlink() {
                // A link is as trusted as what it leads to (and the folder that holds that).
                check_trusted(&entry_path)?;
                continue;
            }
            owned_and_guarded(&entry_path, &meta)?;
            if meta.is_dir() {
                folders.push(entry_path);
            }
        }
    }
    Ok(())
}

/// Whether the object `meta` describes belongs to the user running this process.
pub fn owner_is_me(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.uid() == rustix::process::geteuid().as_raw()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// Checks that the object `meta` describes belongs to this user (or root) and that neither its
/// group nor others may write to it.
pub fn owned_and_guarded(path: &Path, meta: &Metadata) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if !owner_is_me(meta) && meta.uid() != 0 {
            return Err(format!(
                "{} belongs to user {}, not to this user ({}) or root",
                path.display(),
                meta.uid(),
                rustix::process::geteuid().as_raw()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "{} may be written by other users (mode {:o}); `chmod go-w` it",
                path.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta);
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_private_file_is_made_once_and_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("secret.key");
        assert!(create_private_once(&path, b"first").expect("created"));
        assert!(!create_private_once(&path, b"second").expect("kept"));
        assert_eq!(std::fs::read(&path).expect("read"), b"first");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("list").count(),
            1,
            "no temporary left"
        );
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), dir.path().join("link"))
            .expect("link");
        assert!(write_new_private(&dir.path().join("link"), b"x").is_err());
        assert!(
            !dir.path().join("elsewhere").exists(),
            "nothing written through a link"
        );
    }

    #[test]
    fn files_others_may_write_are_not_trusted() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .expect("chmod");
        let file = dir.path().join("lib.so");
        std::fs::write(&file, b"code").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(check_trusted(&file), Ok(()));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        let err = check_trusted(&file).expect_err("world-writable");
        assert!(err.contains("may be written by other users"), "{err}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        assert!(
            check_trusted(&file).is_err(),
            "its folder is world-writable"
        );
    }

    #[test]
    fn a_tree_is_trusted_only_when_every_file_in_it_is_guarded() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let tree = dir.path().join("share");
        std::fs::create_dir_all(tree.join("models/m/onnx")).expect("mkdir");
        std::fs::write(tree.join("models/m/onnx/model.onnx"), b"graph").expect("write");
        let outside = dir.path().join("outside");
        std::fs::write(&outside, b"x").expect("write");
        std::os::unix::fs::symlink(&outside, tree.join("models/m/link")).expect("symlink");
        assert_eq!(check_trusted_tree(&tree), Ok(()));
        let mode = |path: &Path, mode| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        };
        mode(&tree.join("models/m/onnx/model.onnx"), 0o666);
        let refused = check_trusted_tree(&tree).expect_err("a file others may write");
        assert!(refused.contains("model.onnx"), "{refused}");
        mode(&tree.join("models/m/onnx/model.onnx"), 0o644);
        mode(&tree.join("models/m/onnx"), 0o777);
        assert!(
            check_trusted_tree(&tree).is_err(),
            "a folder others may write"
        );
        mode(&tree.join("models/m/onnx"), 0o755);
        mode(&outside, 0o666);
        assert!(
            check_trusted_tree(&tree).is_err(),
            "a link to a file others may write"
        );
        mode(&outside, 0o644);
        assert_eq!(check_trusted_tree(&tree), Ok(()));
    }
}
