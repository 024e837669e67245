//! Password settings are encrypted at rest: ChaCha20-Poly1305 (ring) under a 256-bit key kept in
//! its own file outside the data folder (`<keys folder>/<data folder id>.key`, the keys folder
//! and the file readable by this user only), never in the database nor beside it. A copy of the
//! data folder (a backup, a folder a plugin or an integration got hold of) reveals none of them.
//! Each value is sealed with a fresh random nonce and bound to its connector and setting, so a
//! sealed value moved to another place does not open.

use std::collections::HashSet;
use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use quarry_core::trust::{create_private_once, owned_and_guarded};
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

use crate::StoreError;

/// The key file an older Quarry kept beside the database; moved to the keys folder at the next
/// open.
pub const LEGACY_KEY_FILE: &str = "secret.key";
/// What starts a sealed value (its format's version).
const SEALED: &str = "sealed:v1:";

/// Seals and opens secret settings with the data folder's key.
pub(crate) struct SecretBox {
    key: LessSafeKey,
    path: PathBuf,
    /// The places whose secret could not be opened, reported once each.
    reported: Mutex<HashSet<String>>,
}

impl SecretBox {
    /// The sealing key of the data folder `id`, in `keys_dir` (created private to this user;
    /// refused when another user may write to it). A key an older Quarry kept at `legacy`
    /// (beside the database) is moved there first.
    pub(crate) fn open_for(
        keys_dir: &Path,
        id: &str,
        legacy: &Path,
    ) -> Result<SecretBox, StoreError> {
        prepare_keys_dir(keys_dir)?;
        let path = keys_dir.join(format!("{id}.key"));
        adopt_legacy(legacy, &path)?;
        SecretBox::open_or_create(&path)
    }

    /// The sealing key of the team database `id`, in `keys_dir`, as [`SecretBox::open_for`];
    /// when the file is missing it is made only if `may_create` (no host sealed anything with
    /// a key yet), else the error says to copy the team's key file here.
    pub(crate) fn open_shared(
        keys_dir: &Path,
        id: &str,
        may_create: bool,
    ) -> Result<SecretBox, StoreError> {
        prepare_keys_dir(keys_dir)?;
        let path = keys_dir.join(format!("{id}.key"));
        if !may_create && !path.exists() {
            return Err(StoreError::Open {
                path,
                message: "the team database's secrets are sealed with a key this host lacks: \
                          copy this file from a host of the team (it is the same on all)"
                    .to_owned(),
            });
        }
        SecretBox::open_or_create(&path)
    }

    /// Where the key is kept.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The key in `path`, created (random, mode 0600) when there is none. Two processes
    /// opening a new data folder at once agree on one key.
    pub(crate) fn open_or_create(path: &Path) -> Result<SecretBox, StoreError> {
        let failed = |message: String| StoreError::Open {
            path: path.to_owned(),
            message,
        };
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| failed(format!("no randomness: {e}")))?;
        create_private_once(path, hex::encode(key).as_bytes())
            .map_err(|e| failed(format!("cannot create the key: {e}")))?;
        let text =
            fs::read_to_string(path).map_err(|e| failed(format!("cannot read the key: {e}")))?;
        let key = hex::decode(text.trim())
            .ok()
            .filter(|key| key.len() == 32)
            .ok_or_else(|| {
                failed("the key file is damaged (it must hold 64 hex digits)".to_owned())
            })?;
        SecretBox::from_key(&key, path)
    }

    fn from_key(key: &[u8], path: &Path) -> Result<SecretBox, StoreError> {
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, key).map_err(|_| StoreError::Open {
            path: path.to_owned(),
            message: "the key file is damaged".to_owned(),
        })?;
        Ok(SecretBox {
            key: LessSafeKey::new(unbound),
            path: path.to_owned(),
            reported: Mutex::default(),
        })
    }

    /// `plain` sealed for the place `context` names (connector and setting).
    pub(crate) fn seal(&self, context: &str, plain: &str) -> Result<String, StoreError> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce)
            .map_err(|e| StoreError::system("no randomness to seal a secret", e))?;
        let mut sealed = plain.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context.as_bytes()),
                &mut sealed,
            )
            .map_err(|_unspecified| StoreError::Seal)?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(format!("{SEALED}{}", STANDARD.encode(out)))
    }

    /// The value `sealed` holds for `context`; an error when it was sealed under another key or
    /// for another place, or is damaged.
    pub(crate) fn open(&self, context: &str, sealed: &str) -> Result<String, StoreError> {
        let unreadable = || {
            StoreError::Invalid(format!(
                "a secret setting cannot be decrypted with the key in {} (was the database copied without its key?); set it again",
                self.path.display()
            ))
        };
        let bytes = sealed
            .strip_prefix(SEALED)
            .and_then(|b64| STANDARD.decode(b64).ok())
            .filter(|b| b.len() >= NONCE_LEN)
            .ok_or_else(unreadable)?;
        let (nonce, body) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| unreadable())?;
        let mut body = body.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(context.as_bytes()), &mut body)
            .map_err(|_| unreadable())?;
        String::from_utf8(plain.to_vec()).map_err(|_| unreadable())
    }

    /// Whether the failure to open the secret of `context` is news (the first time).
    pub(crate) fn first_report(&self, context: &str) -> bool {
        self.reported
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(context.to_owned())
    }
}

/// Creates the keys folder (mode 0700) if needed, takes others' permissions away from it, and
/// refuses one that another user owns or may write to.
fn prepare_keys_dir(dir: &Path) -> Result<(), StoreError> {
    let failed = |message: String| StoreError::Open {
        path: dir.to_owned(),
        message,
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| failed(format!("cannot create the keys folder: {e}")))?;
    let meta = fs::metadata(dir).map_err(|e| failed(e.to_string()))?;
    if !meta.is_dir() {
        return Err(failed("the keys folder is not a folder".to_owned()));
    }
    owned_and_guarded(dir, &meta).map_err(failed)?;
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| failed(format!("cannot make the keys folder private: {e}")))?;
    }
    Ok(())
}

/// Moves a key an older Quarry kept at `legacy` to `path`: written there (unless a key is there
/// already), then removed from the data folder once both hold the same key. A different key at
/// `path` wins; the old file is left, with a warning, for the user to delete.
fn adopt_legacy(legacy: &Path, path: &Path) -> Result<(), StoreError> {
    let Ok(old) = fs::read_to_string(legacy) else {
        return Ok(());
    };
    let failed = |message: String| StoreError::Open {
        path: path.to_owned(),
        message,
    };
    create_private_once(path, old.trim().as_bytes())
        .map_err(|e| failed(format!("cannot move the sealing key: {e}")))?;
    let current =
        fs::read_to_string(path).map_err(|e| failed(format!("cannot read the key: {e}")))?;
    if current.trim() == old.trim() {
        fs::remove_file(legacy)
            .map_err(|e| failed(format!("cannot remove {}: {e}", legacy.display())))?;
        tracing::info!(
            "the sealing key moved out of the data folder, to {}",
            path.display()
        );
    } else {
        tracing::warn!(
            "{} is not the sealing key in use ({}); it is not used and can be deleted",
            legacy.display(),
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_in_their_place_and_with_their_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("df.key");
        let secrets = SecretBox::open_or_create(&path).expect("key created");
        let sealed = secrets.seal("cn_a/password", "hunter2").expect("sealed");
        assert!(sealed.starts_with(SEALED));
        assert!(!sealed.contains("hunter2"));
        assert_ne!(
            sealed,
            secrets.seal("cn_a/password", "hunter2").expect("sealed")
        );
        let again = SecretBox::open_or_create(&path).expect("key read back");
        assert_eq!(
            again.open("cn_a/password", &sealed).expect("opens"),
            "hunter2"
        );
        assert!(
            again.open("cn_b/password", &sealed).is_err(),
            "bound to its place"
        );
        let other = SecretBox::open_or_create(&dir.path().join("other.key")).expect("key");
        let err = other
            .open("cn_a/password", &sealed)
            .expect_err("another key");
        assert!(err.to_string().contains("cannot be decrypted"), "{err}");
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_key_beside_the_database_moves_to_the_keys_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let legacy = dir.path().join(LEGACY_KEY_FILE);
        let old = SecretBox::open_or_create(&legacy).expect("old key");
        let sealed = old.seal("cn_a/password", "hunter2").expect("sealed");
        let keys = dir.path().join("config/keys");
        let moved = SecretBox::open_for(&keys, "df_1", &legacy).expect("moved");
        assert_eq!(
            moved.open("cn_a/password", &sealed).expect("opens"),
            "hunter2"
        );
        assert!(!legacy.exists(), "no key is left in the data folder");
        assert!(keys.join("df_1.key").is_file());
        let mode = fs::metadata(&keys).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
