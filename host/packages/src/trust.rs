//! The publishers the user trusts: `trusted-publishers.toml` in the data folder, one key each
//! with the name the user gave it. A plugin signed by one of them installs without a hash pin.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::PackageError;
use crate::signature::PublicKey;
use crate::state;

/// The file's name in the data folder.
pub const TRUST_FILE: &str = "trusted-publishers.toml";
/// The largest file read.
const MAX_TRUST_BYTES: u64 = 1 << 20;

/// One trusted publisher.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Publisher {
    /// Their key, `ed25519:...`.
    pub key: String,
    /// The name the user gave them.
    pub name: String,
    /// When the user trusted them (RFC 3339).
    pub added_at: String,
}

/// The trusted publishers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Trusted {
    /// Each, in the order trusted.
    #[serde(default, rename = "publisher")]
    pub publishers: Vec<Publisher>,
}

impl Trusted {
    /// Reads the file at `path`; none there trusts no one.
    pub fn read(path: &Path) -> Result<Trusted, PackageError> {
        state::read(path, MAX_TRUST_BYTES)
    }

    /// The trusted publisher of `key`.
    pub fn find(&self, key: &PublicKey) -> Option<&Publisher> {
        let key = key.to_string();
        self.publishers.iter().find(|p| p.key == key)
    }

    /// Trusts `key` as `name` (renaming it when it is trusted already).
    pub fn add(path: &Path, key: &PublicKey, name: &str, now: &str) -> Result<(), PackageError> {
        Trusted::change(path, |trusted| {
            let key = key.to_string();
            trusted.publishers.retain(|p| p.key != key);
            trusted.publishers.push(Publisher {
                key,
                name: name.to_owned(),
                added_at: now.to_owned(),
            });
        })
    }

    /// Stops trusting `key`: whether it was trusted.
    pub fn remove(path: &Path, key: &PublicKey) -> Result<bool, PackageError> {
        let key = key.to_string();
        let mut removed = false;
        Trusted::change(path, |trusted| {
            let before = trusted.publishers.len();
            trusted.publishers.retain(|p| p.key != key);
            removed = trusted.publishers.len() != before;
        })?;
        Ok(removed)
    }

    fn change(path: &Path, change: impl FnOnce(&mut Trusted)) -> Result<(), PackageError> {
        let header = "# The plugin publishers you trust (`quarry plugin trust`): a plugin signed by one of\n# these keys installs without a sha256 pin.\n";
        state::change(path, MAX_TRUST_BYTES, header, change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::SecretKey;

    #[test]
    fn publishers_are_trusted_renamed_and_forgotten_by_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(TRUST_FILE);
        let key = SecretKey::generate().expect("key").public();
        let other = SecretKey::generate().expect("key").public();
        assert!(Trusted::read(&path).expect("none").find(&key).is_none());
        Trusted::add(&path, &key, "Ada", "2026-11-28T00:00:00Z").expect("add");
        Trusted::add(&path, &key, "Ada L.", "2026-11-28T00:00:01Z").expect("rename");
        let trusted = Trusted::read(&path).expect("read");
        assert_eq!(trusted.publishers.len(), 1);
        assert_eq!(trusted.find(&key).expect("found").name, "Ada L.");
        assert!(trusted.find(&other).is_none());
        assert!(!Trusted::remove(&path, &other).expect("remove other"));
        assert!(Trusted::remove(&path, &key).expect("remove"));
        assert!(Trusted::read(&path).expect("read").find(&key).is_none());
    }
}
