//! API keys: `qry_`, 43 base62 characters of 32 random bytes, and a 6-character base62 CRC-32 of
//! those, so a leaked key can be recognised by scanners without a database. Only a SHA-256 of the
//! key is stored; its first characters (the lookup) find its row, and the hashes are compared in
//! constant time.

use std::fmt;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::StoreError;

/// Every key starts with this.
pub const KEY_PREFIX: &str = "qry_";
const BODY_LEN: usize = 43;
const CHECK_LEN: usize = 6;
/// Characters of the body stored in clear to find the key's row (about 95 of its 256 bits).
const LOOKUP_LEN: usize = 16;
const KEY_LEN: usize = KEY_PREFIX.len() + BODY_LEN + CHECK_LEN;
const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A new key, shown to the user once. `Debug` and `Display` never show it; [`ApiKey::expose`]
/// does.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key itself, to show once.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(redacted)")
    }
}

/// What is stored of a key.
pub(crate) struct KeyParts {
    pub(crate) lookup: String,
    pub(crate) hash: [u8; 32],
}

/// Makes a new random key.
pub(crate) fn generate() -> Result<(ApiKey, KeyParts), StoreError> {
    let mut random = [0u8; 32];
    getrandom::fill(&mut random)
        .map_err(|e| StoreError::system("no randomness for a new key", e))?;
    let body = base62(&random, BODY_LEN);
    let check = base62(&crc32fast::hash(body.as_bytes()).to_be_bytes(), CHECK_LEN);
    let key = format!("{KEY_PREFIX}{body}{check}");
    let parts = KeyParts {
        lookup: body[..LOOKUP_LEN].to_owned(),
        hash: Sha256::digest(key.as_bytes()).into(),
    };
    Ok((ApiKey(key), parts))
}

/// The stored parts of `candidate`, if it has the form of a key and its checksum matches.
pub(crate) fn parse(candidate: &str) -> Option<KeyParts> {
    if !looks_like_key(candidate) {
        return None;
    }
    let body = &candidate[KEY_PREFIX.len()..KEY_PREFIX.len() + BODY_LEN];
    Some(KeyParts {
        lookup: body[..LOOKUP_LEN].to_owned(),
        hash: Sha256::digest(candidate.as_bytes()).into(),
    })
}

/// True when `s` is a Quarry key by its form and checksum (it may still be unknown or revoked).
/// Secret scanners and log filters can use this without access to the database.
pub fn looks_like_key(s: &str) -> bool {
    if s.len() != KEY_LEN || !s.starts_with(KEY_PREFIX) {
        return false;
    }
    let rest = &s.as_bytes()[KEY_PREFIX.len()..];
    if !rest.iter().all(u8::is_ascii_alphanumeric) {
        return false;
    }
    let (body, check) = rest.split_at(BODY_LEN);
    base62(&crc32fast::hash(body).to_be_bytes(), CHECK_LEN).as_bytes() == check
}

/// `prefix` and 23 base62 characters of 136 random bits: ids of integrations and
/// connectors.
pub(crate) fn random_id(prefix: &str) -> Result<String, StoreError> {
    let mut random = [0u8; 17];
    getrandom::fill(&mut random)
        .map_err(|e| StoreError::system("no randomness for a new id", e))?;
    Ok(format!("{prefix}{}", base62(&random, 23)))
}

/// 43 base62 characters of 256 random bits: admin sessions, login links, CSRF tokens.
pub(crate) fn random_secret() -> Result<String, StoreError> {
    let mut random = [0u8; 32];
    getrandom::fill(&mut random)
        .map_err(|e| StoreError::system("no randomness for a new secret", e))?;
    Ok(base62(&random, BODY_LEN))
}

/// Compares two hashes in constant time.
pub(crate) fn hashes_equal(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

/// `bytes` as a big-endian number in base 62, left-padded with zeros to `width` digits.
fn base62(bytes: &[u8], width: usize) -> String {
    let mut number = bytes.to_vec();
    let mut digits = Vec::with_capacity(width);
    while number.iter().any(|&b| b != 0) {
        let mut remainder = 0u32;
        for byte in &mut number {
            let value = (remainder << 8) | u32::from(*byte);
            *byte = (value / 62) as u8;
            remainder = value % 62;
        }
        digits.push(ALPHABET[remainder as usize]);
    }
    while digits.len() < width {
        digits.push(b'0');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_documented_form_and_parse_back() -> Result<(), StoreError> {
        let (key, parts) = generate()?;
        let key = key.expose();
        assert_eq!(key.len(), KEY_LEN);
        assert!(key.starts_with("qry_"));
        assert!(looks_like_key(key));
        let parsed = parse(key).expect("a generated key parses");
        assert_eq!(parsed.lookup, parts.lookup);
        assert!(hashes_equal(&parsed.hash, &parts.hash));
        Ok(())
    }

    #[test]
    fn checksums_catch_typos() -> Result<(), StoreError> {
        let (key, _) = generate()?;
        let key = key.expose().to_owned();
        let mut typo = key.clone().into_bytes();
        let i = KEY_PREFIX.len() + 5;
        typo[i] = if typo[i] == b'a' { b'b' } else { b'a' };
        let typo = String::from_utf8(typo).expect("ascii");
        assert!(!looks_like_key(&typo));
        assert!(parse(&typo).is_none());
        for bad in ["", "qry_", "Bearer x", &key[1..], &format!("{key}x")] {
            assert!(!looks_like_key(bad), "{bad}");
        }
        Ok(())
    }

    #[test]
    fn base62_pads_and_encodes() {
        assert_eq!(base62(&[0, 0], 3), "000");
        assert_eq!(base62(&[61], 2), "0z");
        assert_eq!(base62(&[62], 2), "10");
        assert_eq!(base62(&[0xFF; 32], BODY_LEN).len(), BODY_LEN);
    }

    #[test]
    fn debug_never_shows_the_key() -> Result<(), StoreError> {
        let (key, _) = generate()?;
        assert_eq!(format!("{key:?}"), "ApiKey(redacted)");
        Ok(())
    }
}
