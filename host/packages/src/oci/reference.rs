//! An OCI reference as the user writes it after `oci://`: `registry[:port]/repository:tag` or
//! `registry[:port]/repository@sha256:<hex>`.

use std::fmt;

use crate::address::is_loopback;
use crate::error::PackageError;

/// A plugin's place in a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host` or `host:port`.
    pub registry: String,
    /// `quarry/notes`.
    pub repository: String,
    /// The tag, unless a digest is given (`latest` when neither is).
    pub tag: Option<String>,
    /// `sha256:<hex>`, pinning the manifest.
    pub digest: Option<String>,
}

impl Reference {
    /// Reads `text` (without `oci://`); the error names the part that is wrong.
    pub fn parse(text: &str) -> Result<Reference, PackageError> {
        let bad = |why: String| {
            PackageError::Refused(format!(
                "oci://{text}: {why} (write oci://registry/name:tag or oci://registry/name@sha256:<64 hex digits>)"
            ))
        };
        let Some((registry, rest)) = text.split_once('/') else {
            return Err(bad("no repository after the registry".into()));
        };
        let registry_ok = !registry.is_empty()
            && registry
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
        if !registry_ok {
            return Err(bad(format!("{registry:?} is not a registry host")));
        }
        let (repository, tag, digest) = if let Some((repository, digest)) = rest.split_once('@') {
            (repository, None, Some(digest.to_owned()))
        } else {
            let last = rest.rfind('/').map_or(0, |i| i + 1);
            match rest[last..].split_once(':') {
                Some((name, tag)) => (&rest[..last + name.len()], Some(tag.to_owned()), None),
                None => (rest, Some("latest".to_owned()), None),
            }
        };
        if !is_repository(repository) {
            return Err(bad(format!(
                "{repository:?} is not a repository name (lowercase letters, digits, '.', '_', '-', parts joined by '/')"
            )));
        }
        if let Some(tag) = &tag
            && !is_tag(tag)
        {
            return Err(bad(format!("{tag:?} is not a tag")));
        }
        if let Some(digest) = &digest
            && !is_sha256_digest(digest)
        {
            return Err(bad(format!("{digest:?} is not a sha256 digest")));
        }
        Ok(Reference {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// The tag or digest the manifest is asked for by.
    pub fn reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// The last part of the repository, which must be the plugin's id.
    pub fn name(&self) -> &str {
        self.repository
            .rsplit('/')
            .next()
            .unwrap_or(&self.repository)
    }

    /// The registry's base address: `http://` for one on this computer, `https://` otherwise.
    pub fn base(&self) -> Result<reqwest::Url, PackageError> {
        let https = reqwest::Url::parse(&format!("https://{}/", self.registry))
            .map_err(|e| PackageError::Refused(format!("oci://{}: {e}", self.registry)))?;
        if is_loopback(&https) {
            reqwest::Url::parse(&format!("http://{}/", self.registry))
                .map_err(|e| PackageError::Refused(format!("oci://{}: {e}", self.registry)))
        } else {
            Ok(https)
        }
    }

    /// The same place pinned to `digest`.
    pub fn pinned(&self, digest: &str) -> Reference {
        Reference {
            tag: None,
            digest: Some(digest.to_owned()),
            ..self.clone()
        }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        match (&self.digest, &self.tag) {
            (Some(digest), _) => write!(f, "@{digest}"),
            (None, Some(tag)) => write!(f, ":{tag}"),
            (None, None) => Ok(()),
        }
    }
}

/// Whether `text` is `sha256:` and 64 lowercase hex digits.
pub fn is_sha256_digest(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn is_repository(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 255
        && text.split('/').all(|part| {
            !part.is_empty()
                && part.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && part.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && part.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
                })
        })
}

fn is_tag(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 128
        && !text.starts_with(['.', '-'])
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_by_tag_and_by_digest_are_read_and_written_back() {
        let tagged = Reference::parse("127.0.0.1:5000/quarry/notes:1.2.0").expect("tag");
        assert_eq!(tagged.registry, "127.0.0.1:5000");
        assert_eq!(tagged.repository, "quarry/notes");
        assert_eq!(tagged.reference(), "1.2.0");
        assert_eq!(tagged.name(), "notes");
        assert_eq!(
            tagged.to_string(),
            "oci://127.0.0.1:5000/quarry/notes:1.2.0"
        );
        assert_eq!(tagged.base().expect("base").scheme(), "http");
        let digest = format!("sha256:{}", "a".repeat(64));
        let pinned = Reference::parse(&format!("ghcr.io/me/notes@{digest}")).expect("digest");
        assert_eq!(pinned.reference(), digest);
        assert_eq!(pinned.base().expect("base").scheme(), "https");
        assert_eq!(
            Reference::parse("ghcr.io/me/notes")
                .expect("latest")
                .reference(),
            "latest"
        );
        for bad in [
            "ghcr.io",
            "ghcr.io/Me/notes",
            "ghcr.io/me/notes@sha256:abc",
            "ghcr.io/me/notes:-x",
            "ghcr.io/me//notes",
            "user@ghcr.io/x",
        ] {
            assert!(Reference::parse(bad).is_err(), "{bad}");
        }
    }
}
