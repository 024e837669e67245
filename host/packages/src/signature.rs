//! Signed plugins: a publisher's ed25519 key signs a statement of the packed file's entries
//! (each name and its sha256, in the packed order), and the signature travels inside the file
//! as `quarry-plugin.sig`. ed25519 rather than Sigstore: a signature that verifies offline
//! from a 32-byte key the user trusts once, with no certificate authority, transparency log or
//! network service on the way (Sigstore's keyless signing needs Fulcio and Rekor; its keyed
//! form brings ECDSA keys and a bundle format for the same guarantee).
//!
//! Keys are written `ed25519:<base64 of 32 bytes>`; a secret key file holds
//! `quarry-ed25519-secret:<base64 of the 32-byte seed>` and must be readable by its owner only.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use base64::Engine as _;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::PackageError;
use crate::pack::Pack;

/// What a signature's statement starts with: its format, so it is never taken for another.
const STATEMENT_HEADER: &[u8] = b"quarry-plugin-signature-v1\n";
/// How a secret key file starts.
const SECRET_PREFIX: &str = "quarry-ed25519-secret:";
/// How a public key is written.
const PUBLIC_PREFIX: &str = "ed25519:";

/// A publisher's public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let encoded = base64::engine::general_purpose::STANDARD.encode(self.0.as_bytes());
        write!(f, "{PUBLIC_PREFIX}{encoded}")
    }
}

impl FromStr for PublicKey {
    type Err = PackageError;

    fn from_str(text: &str) -> Result<PublicKey, PackageError> {
        let bad = |why: &str| {
            PackageError::Signature(format!(
                "{text:?} is not a publisher key ({why}); a key is written ed25519:<44 base64 characters>, as `quarry plugin keygen` prints it"
            ))
        };
        let encoded = text
            .trim()
            .strip_prefix(PUBLIC_PREFIX)
            .ok_or_else(|| bad("it does not start with ed25519:"))?;
        let bytes: [u8; 32] = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad("not 32 bytes in base64"))?;
        VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| bad("not a point of the curve"))
    }
}

/// A publisher's secret key.
pub struct SecretKey(SigningKey);

impl SecretKey {
    /// A new random key.
    pub fn generate() -> Result<SecretKey, PackageError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)
            .map_err(|e| PackageError::Signature(format!("no randomness for a key: {e}")))?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// Reads the key file at `path`, which only its owner may read.
    pub fn read(path: &Path) -> Result<SecretKey, PackageError> {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).map_err(PackageError::io(path))?;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(PackageError::Signature(format!(
                "{}: others may read this secret key; `chmod 600` it (and make a new key if it was shared)",
                path.display()
            )));
        }
        let text =
            quarry_runtime::read_bounded_text(path, 4 << 10).map_err(PackageError::io(path))?;
        let seed: [u8; 32] = text
            .trim()
            .strip_prefix(SECRET_PREFIX)
            .and_then(|e| base64::engine::general_purpose::STANDARD.decode(e).ok())
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| {
                PackageError::Signature(format!(
                    "{}: not a secret key written by `quarry plugin keygen`",
                    path.display()
                ))
            })?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// Writes the key to a new file at `path`, readable by its owner only.
    pub fn write_new(&self, path: &Path) -> Result<(), PackageError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let encoded = base64::engine::general_purpose::STANDARD.encode(self.0.to_bytes());
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(PackageError::io(path))?;
        file.write_all(format!("{SECRET_PREFIX}{encoded}\n").as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(PackageError::io(path))
    }

    /// Its public key.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }
}

/// The signature entry.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureFile {
    version: u32,
    key: String,
    signature: String,
}

/// `pack` signed by `key` (replacing any signature).
pub fn sign(pack: Pack, key: &SecretKey) -> Result<Pack, PackageError> {
    let signature = key.0.sign(&statement(&pack));
    let file = SignatureFile {
        version: 1,
        key: key.public().to_string(),
        signature: base64::engine::general_purpose::STANDARD.encode(signature.to_bytes()),
    };
    let text = toml::to_string(&file).map_err(|e| PackageError::Signature(e.to_string()))?;
    Ok(pack.with_signature(
        format!("# The publisher's signature of this plugin's files.\n{text}").into_bytes(),
    ))
}

/// The key that signed `pack`, once its signature is checked: `None` when it is not signed;
/// an error when the signature is malformed or does not match the files (changed after
/// signing).
pub fn verify(pack: &Pack) -> Result<Option<PublicKey>, PackageError> {
    let Some(bytes) = pack.signature() else {
        return Ok(None);
    };
    let malformed = |why: String| {
        PackageError::Signature(format!(
            "its signature cannot be read ({why}); nothing was installed"
        ))
    };
    let text = std::str::from_utf8(bytes).map_err(|_| malformed("not UTF-8".into()))?;
    let file: SignatureFile = toml::from_str(text).map_err(|e| malformed(e.to_string()))?;
    if file.version != 1 {
        return Err(malformed(format!(
            "version {}; this Quarry reads version 1: update Quarry",
            file.version
        )));
    }
    let key: PublicKey = file.key.parse()?;
    let signature: [u8; 64] = base64::engine::general_purpose::STANDARD
        .decode(&file.signature)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| malformed("not 64 bytes in base64".into()))?;
    key.0
        .verify(&statement(pack), &Signature::from_bytes(&signature))
        .map_err(|_| {
            PackageError::Signature(format!(
                "its signature by {key} does not match its files: they were changed after signing; nothing was installed"
            ))
        })?;
    Ok(Some(key))
}

/// What is signed: the header, then each signed entry's name and sha256, a line each.
fn statement(pack: &Pack) -> Vec<u8> {
    let mut statement = STATEMENT_HEADER.to_vec();
    for entry in pack.signed_entries() {
        statement.extend_from_slice(
            format!(
                "{} {}\n",
                hex::encode(Sha256::digest(entry.bytes)),
                entry.name
            )
            .as_bytes(),
        );
    }
    statement
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack() -> Pack {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("quarry-plugin.toml"),
            "id = \"notes\"\nname = \"Notes\"\nversion = \"1.0.0\"\nwit = \"0.5.0\"\ncomponent = \"notes.wasm\"\n",
        )
        .expect("manifest");
        std::fs::write(dir.path().join("notes.wasm"), b"\0asm").expect("wasm");
        std::fs::write(dir.path().join("README.md"), "# Notes\n").expect("readme");
        std::fs::write(dir.path().join("LICENSE"), "MIT\n").expect("licence");
        Pack::from_folder(dir.path()).expect("pack")
    }

    #[test]
    fn a_signature_verifies_by_its_key_and_not_after_a_change() {
        let key = SecretKey::generate().expect("key");
        let signed = sign(pack(), &key).expect("sign");
        let bytes = signed.to_bytes().expect("bytes");
        let read = Pack::parse(&bytes).expect("parse");
        assert_eq!(verify(&read).expect("verifies"), Some(key.public()));
        assert_eq!(verify(&pack()).expect("unsigned"), None);
        let text = key.public().to_string();
        assert_eq!(text.parse::<PublicKey>().expect("parse"), key.public());
        // Another README under the same signature.
        let mut changed = bytes.clone();
        let at = changed
            .windows(7)
            .position(|w| w == b"# Notes")
            .expect("readme inside");
        changed[at + 2] = b'M';
        let changed = Pack::parse(&changed).expect("still a pack");
        let err = verify(&changed).expect_err("changed");
        assert!(err.to_string().contains("changed after signing"), "{err}");
    }

    #[test]
    fn a_secret_key_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("key");
        let key = SecretKey::generate().expect("key");
        key.write_new(&path).expect("write");
        assert_eq!(SecretKey::read(&path).expect("read").public(), key.public());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = SecretKey::read(&path).err().expect("refused");
        assert!(err.to_string().contains("chmod 600"), "{err}");
        assert!(
            key.write_new(&path).is_err(),
            "an existing key is never overwritten"
        );
    }
}
