//! `plugins.lock` in the data folder: for every plugin installed there, where it came from, the
//! digest that was checked, how it was verified and the grants the user accepted. A state file
//! (`state.rs`): changed under a file lock, so the CLI and a server installing from the
//! settings page never lose each other's entries, and written whole.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::PackageError;
use crate::state;

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
        state::read(path, MAX_LOCK_BYTES)
    }

    /// Changes the lock at `path` by `change`, holding it for the time.
    pub fn update(path: &Path, change: impl FnOnce(&mut Lock)) -> Result<(), PackageError> {
        let header = "# Written by Quarry: the plugins installed with `quarry plugin install` or the settings page,\n# where each came from, how it was verified and what you granted it.\n";
        state::change(path, MAX_LOCK_BYTES, header, |lock: &mut Lock| {
            change(lock);
            lock.plugins.sort_by(|a, b| a.id.cmp(&b.id));
        })
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
