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

/// Defines an opaque, URL-safe identifier type checked by [`is_valid_id`].
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// Checks and wraps an identifier.
            pub fn parse(s: impl Into<String>) -> Result<Self, CoreError> {
                let s = s.into();
                if is_valid_id(&s) {
                    Ok($name(s))
                } else {
                    Err(CoreError::InvalidId {
                        max: MAX_ID_LEN,
                        what: $what,
                        value: s.chars().take(MAX_ID_LEN + 8).collect(),
                    })
                }
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(
    /// The id of a document within its connector, stable across re-syncs of the same source item.
    DocId,
    "doc_id"
);

id_type!(
    /// The id of a connector (`cn_` and random characters), stable for the connector's lifetime.
    ConnectorId,
    "connector_id"
);

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
        let err = ConnectorId::parse("a.b").expect_err("dot");
        assert!(err.to_string().starts_with("connector_id must be"), "{err}");
    }
}
