//! Files Quarry runs or keeps secrets in (compiled plugin code, the model's native library, the
//! data folder) must belong to the user running Quarry (or to root) and be writable by no one
//! else; otherwise another local user could have put code there, or read what is kept there.

use std::fs::Metadata;
use std::path::Path;

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

/// Checks that the object `meta` describes belongs to this user (or root) and that neither its
/// group nor others may write to it.
pub fn owned_and_guarded(path: &Path, meta: &Metadata) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me && meta.uid() != 0 {
            return Err(format!(
                "{} belongs to user {}, not to this user ({me}) or root",
                path.display(),
                meta.uid()
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
}
