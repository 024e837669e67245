//! The data folder is this user's alone: created readable by this user only, and an existing one
//! (made by an older Quarry, or by hand) is made so at every start, with every file in it.

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::{Context, bail};
use quarry_core::trust::owner_is_me;

/// Mode of the data folder and of every folder in it.
const DIR_MODE: u32 = 0o700;
/// Mode of every file in the data folder.
const FILE_MODE: u32 = 0o600;

/// Files created by this process are readable by this user only (the database, its journal,
/// the index, tokens): the umask takes the group's and others' bits away.
pub fn restrict_new_files() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// Creates the data folder `dir` if needed, refuses one that belongs to another user, and takes
/// away every permission of the group and others from it and from everything inside it.
pub fn secure_data_dir(dir: &Path) -> anyhow::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .with_context(|| format!("cannot create the data folder {}", dir.display()))?;
    let meta = fs::metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    if !owner_is_me(&meta) {
        bail!(
            "the data folder {} belongs to user {}, not to this user ({}); Quarry keeps its data only in a folder of its own user's (pass another --data-dir)",
            dir.display(),
            meta.uid(),
            rustix::process::geteuid().as_raw()
        );
    }
    let fixed = restrict(dir, &meta)?;
    if fixed > 0 {
        tracing::warn!(
            data_dir = %dir.display(),
            "{fixed} file(s) and folder(s) of the data folder were readable by other users; they no longer are"
        );
    }
    Ok(())
}

/// Restricts `path` (described by `meta`) and, for a folder, what it holds, without following
/// links. Returns how many modes were changed. A running server creates and removes files
/// meanwhile: one that vanished is passed over.
fn restrict(path: &Path, meta: &fs::Metadata) -> anyhow::Result<usize> {
    let wanted = if meta.is_dir() {
        DIR_MODE
    } else if meta.is_file() {
        FILE_MODE
    } else {
        return Ok(0); // links and anything else are left as they are
    };
    let mut fixed = 0;
    if meta.mode() & 0o077 != 0 {
        let mode = (meta.mode() & 0o700) | wanted;
        // Changed through a handle opened without following links: what is changed is what
        // was looked at, even if it was replaced by a link meanwhile.
        let changed = fs::OpenOptions::new()
            .read(true)
            .custom_flags(
                (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
            )
            .open(path)
            .and_then(|handle| handle.set_permissions(fs::Permissions::from_mode(mode)));
        match changed {
            Ok(()) => fixed += 1,
            Err(e)
                if matches!(e.kind(), ErrorKind::NotFound)
                    || e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) =>
            {
                return Ok(0);
            }
            Err(e) => {
                return Err(e).with_context(|| format!("cannot make {} private", path.display()));
            }
        }
    }
    if meta.is_dir() {
        let entries = match fs::read_dir(path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(fixed),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(meta) => fixed += restrict(&entry.path(), &meta)?,
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot read {}", entry.path().display()));
                }
            }
        }
    }
    Ok(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).expect("meta").mode() & 0o777
    }

    #[test]
    fn an_existing_open_data_folder_is_made_private() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let data = tmp.path().join("data");
        fs::create_dir_all(data.join("index")).expect("mkdir");
        fs::write(data.join("quarry.db"), b"db").expect("write");
        fs::write(data.join("index/meta.json"), b"{}").expect("write");
        fs::set_permissions(&data, fs::Permissions::from_mode(0o755)).expect("chmod");
        fs::set_permissions(data.join("index"), fs::Permissions::from_mode(0o755)).expect("chmod");
        fs::set_permissions(data.join("quarry.db"), fs::Permissions::from_mode(0o644))
            .expect("chmod");
        fs::set_permissions(
            data.join("index/meta.json"),
            fs::Permissions::from_mode(0o666),
        )
        .expect("chmod");
        std::os::unix::fs::symlink("/etc/hostname", data.join("link")).expect("link");
        secure_data_dir(&data).expect("secured");
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&data.join("index")), 0o700);
        assert_eq!(mode(&data.join("quarry.db")), 0o600);
        assert_eq!(mode(&data.join("index/meta.json")), 0o600);
        assert_eq!(
            mode(Path::new("/etc/hostname")) & 0o044,
            0o044,
            "links are not followed"
        );
        let fresh = tmp.path().join("fresh/data");
        secure_data_dir(&fresh).expect("created");
        assert_eq!(mode(&fresh), 0o700);
    }
}
