//! `plugins.lock` in the data folder: for every plugin installed there, where it came from, the
//! digest that was checked, how it was verified and the grants the user accepted. Written
//! whole to a new file and renamed over the old (a crash leaves one or the other), under an
//! exclusive `flock` so the CLI and a server installing from the settings page never lose each
//! other's entries.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::PackageError;

/// The lock file's name in the data folder.
pub const LOCK_FILE: &str = "plugins.lock";
/// The largest lock file read.
const MAX_LOCK_BYTES: u64 = 4 << 20;

/// How an installed plugin's bytes were checked before it was installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verification {
    /// The download's sha256 matched the one the user gave.
    Sha256Pin,
    /// Signed by a key the user trusts (its text in `signed_by`).
    TrustedSignature,
    /// The registry's manifest digest matched the one the user gave (`oci://...@sha256:`).
    OciDigest,
    /// Its digest matched the one its index lists for that version.
    IndexDigest,
    /// From the user's own folder or file: nothing to verify it against.
    LocalSource,
    /// Uploaded by the user on the settings page.
    Upload,
}

impl Verification {
    /// In words, for `plugin list` and the settings page.
    pub fn describe(&self) -> &'static str {
        match self {
            Verification::Sha256Pin => "sha256 pinned by you",
            Verification::TrustedSignature => "signed by a publisher you trust",
            Verification::OciDigest => "registry digest pinned by you",
            Verification::IndexDigest => "sha256 listed by its index",
            Verification::LocalSource => "not verified: from your own files",
            Verification::Upload => "not verified: uploaded by you",
        }
    }
}

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Locked {
    /// Its id (its folder under the data folder's `plugins`).
    pub id: String,
    /// Its version.
    pub version: String,
    /// Where it came from, as the user gave it (a folder, a file, a URL, `oci://...`, an
    /// index name).
    pub source: String,
    /// The digest checked: of the packed file, of the registry's manifest, or of the component
    /// for a folder.
    pub digest: String,
    /// How it was verified.
    pub verification: Verification,
    /// The key that signed it, when it was signed by a trusted one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// The index it was found in (`plugin update` asks it for newer versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// Why its index revoked this version, once `plugin update` saw it: not loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<String>,
    /// The grants the user accepted, in the words they were shown.
    pub grants: Vec<String>,
    /// When (RFC 3339, UTC).
    pub installed_at: String,
}

/// The lock's contents.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Lock {
    /// The installed plugins, by id.
    #[serde(default, rename = "plugin")]
    pub plugins: Vec<Locked>,
}

impl Lock {
    /// The entry of plugin `id`.
    pub fn get(&self, id: &str) -> Option<&Locked> {
        self.plugins.iter().find(|p| p.id == id)
    }

    /// Reads the lock at `path`; none there is an empty lock.
    pub fn read(path: &Path) -> Result<Lock, PackageError> {
        let text = match quarry_runtime::read_bounded_text(path, MAX_LOCK_BYTES) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
            Err(e) => return Err(PackageError::io(path)(e)),
        };
        toml::from_str(&text).map_err(|e| PackageError::State {
            path: path.to_owned(),
            message: format!(
                "{e}; it is written by Quarry: move it aside and install the plugins again to write it anew"
            ),
        })
    }

    /// Changes the lock at `path` by `change`, holding it for the time.
    pub fn update(path: &Path, change: impl FnOnce(&mut Lock)) -> Result<(), PackageError> {
        let _held = Held::take(path)?;
        let mut lock = Lock::read(path)?;
        change(&mut lock);
        lock.plugins.sort_by(|a, b| a.id.cmp(&b.id));
        lock.write(path)
    }

    /// Records `entry`, replacing the entry of the same id.
    pub fn record(path: &Path, entry: Locked) -> Result<(), PackageError> {
        Lock::update(path, |lock| {
            lock.plugins.retain(|p| p.id != entry.id);
            lock.plugins.push(entry);
        })
    }

    /// Forgets plugin `id`.
    pub fn forget(path: &Path, id: &str) -> Result<(), PackageError> {
        Lock::update(path, |lock| lock.plugins.retain(|p| p.id != id))
    }

    fn write(&self, path: &Path) -> Result<(), PackageError> {
        let text = toml::to_string(self).map_err(|e| PackageError::State {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let header = "# Written by Quarry: the plugins installed with `quarry plugin install` or the settings page,\n# where each came from, how it was verified and what you granted it.\n";
        write_replacing(path, format!("{header}{text}").as_bytes())
    }
}

/// Writes `bytes` to a new file beside `path` (mode 0600), syncs it and renames it over `path`.
pub(crate) fn write_replacing(path: &Path, bytes: &[u8]) -> Result<(), PackageError> {
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
pub(crate) struct Held(std::fs::File);

impl Held {
    /// Waits for and takes the hold on `path`.
    pub(crate) fn take(path: &Path) -> Result<Held, PackageError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> Locked {
        Locked {
            id: id.to_owned(),
            version: "1.0.0".into(),
            source: format!("https://example.org/{id}.qplugin"),
            digest: "sha256:00".into(),
            verification: Verification::Sha256Pin,
            signed_by: None,
            index: None,
            revoked: None,
            grants: vec!["No network access".into()],
            installed_at: "2026-11-28T00:00:00Z".into(),
        }
    }

    #[test]
    fn entries_are_recorded_replaced_and_forgotten_by_id() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(LOCK_FILE);
        assert!(Lock::read(&path).expect("none").plugins.is_empty());
        Lock::record(&path, entry("b")).expect("b");
        Lock::record(&path, entry("a")).expect("a");
        let mut newer = entry("b");
        newer.version = "2.0.0".into();
        Lock::record(&path, newer).expect("b again");
        let lock = Lock::read(&path).expect("read");
        let ids: Vec<(&str, &str)> = lock
            .plugins
            .iter()
            .map(|p| (p.id.as_str(), p.version.as_str()))
            .collect();
        assert_eq!(ids, [("a", "1.0.0"), ("b", "2.0.0")]);
        Lock::forget(&path, "a").expect("forget");
        assert!(Lock::read(&path).expect("read").get("a").is_none());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
