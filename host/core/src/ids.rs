//! Opaque, URL-safe identifiers.

use std::fmt;

use crate::CoreError;

/// Longest identifier, in characters (all ASCII).
pub const MAX_ID_LEN: usize = 128;

/// True if `s` is 1 to 128 characters from `[A-Za-z0-9_-]`.
pub fn is_valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The id of a document within its connector, stable across re-syncs of the same source item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DocId(String);

impl DocId {
    /// Checks and wraps a document id.
    pub fn parse(s: impl Into<String>) -> Result<Self, CoreError> {
        let s = s.into();
        if is_valid_id(&s) {
            Ok(DocId(s))
        } else {
            Err(CoreError::InvalidId {
                what: "doc_id",
                value: s.chars().take(MAX_ID_LEN + 8).collect(),
            })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DocId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_url_safe_ids() {
        assert!(DocId::parse("f_AbC-09").is_ok());
        assert!(DocId::parse("x".repeat(128)).is_ok());
        for bad in ["", "a/b", "a b", "é", "../x", "a.b"] {
            assert!(DocId::parse(bad).is_err(), "{bad:?}");
        }
        assert!(DocId::parse("x".repeat(129)).is_err());
    }
}
