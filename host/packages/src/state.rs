//! The small state files of the data folder (`plugins.lock`, `trusted-publishers.toml`,
//! `plugin-indexes.toml`): TOML, read within a bound (none there is the empty state), changed
//! under an exclusive `flock` on a file beside them, and written whole to a new file that is
//! renamed over the old (a crash leaves one or the other).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::PackageError;

/// Reads the state at `path` (at most `max` bytes); none there is `T::default()`.
pub(crate) fn read<T: DeserializeOwned + Default>(
    path: &Path,
    max: u64,
) -> Result<T, PackageError> {
    let text = match quarry_runtime::read_bounded_text(path, max) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(T::default()),
        Err(e) => return Err(PackageError::io(path)(e)),
    };
    toml::from_str(&text).map_err(|e| PackageError::State {
        path: path.to_owned(),
        message: format!("{e}; Quarry writes this file: move it aside, and Quarry starts it anew"),
    })
}

/// Changes the state at `path` by `change`, holding it for the time, and writes it with
/// `header` (comment lines) on top.
pub(crate) fn change<T: Serialize + DeserializeOwned + Default>(
    path: &Path,
    max: u64,
    header: &str,
    change: impl FnOnce(&mut T),
) -> Result<(), PackageError> {
    let _held = Held::take(path)?;
    let mut state: T = read(path, max)?;
    change(&mut state);
    let text = toml::to_string(&state).map_err(|e| PackageError::State {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    write_replacing(path, format!("{header}{text}").as_bytes())
}

/// Writes `bytes` to a new file beside `path` (mode 0600), syncs it and renames it over `path`.
fn write_replacing(path: &Path, bytes: &[u8]) -> Result<(), PackageError> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(PackageError::io(dir))?;
    let new = sibling(path, ".new");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&new)
        .map_err(PackageError::io(&new))?;
    file.write_all(bytes).map_err(PackageError::io(&new))?;
    file.sync_all().map_err(PackageError::io(&new))?;
    std::fs::rename(&new, path).map_err(PackageError::io(path))?;
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// `path` with `suffix` added to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(suffix);
    path.with_file_name(name)
}

/// An exclusive `flock` on `<path>.held`, let go when dropped.
struct Held(std::fs::File);

impl Held {
    /// Waits for and takes the hold on `path`.
    fn take(path: &Path) -> Result<Held, PackageError> {
        use std::os::unix::fs::OpenOptionsExt;
        let held = sibling(path, ".held");
        if let Some(dir) = held.parent() {
            std::fs::create_dir_all(dir).map_err(PackageError::io(dir))?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&held)
            .map_err(PackageError::io(&held))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| PackageError::io(&held)(e.into()))?;
        Ok(Held(file))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(&self.0, rustix::fs::FlockOperation::Unlock);
    }
}
