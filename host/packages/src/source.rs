//! Where a plugin to install comes from, as the user writes it: a folder, a packed file, an
//! `https://` address, an OCI reference (`oci://registry/name:tag` or `@sha256:...`), or a name
//! (`notes`, `notes@1.2.0`) that the configured indexes resolve.

use std::path::PathBuf;

use crate::address::check_web_url;
use crate::error::PackageError;
use crate::oci::Reference;

/// A plugin's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A plugin folder (manifest and component, as built).
    Folder(PathBuf),
    /// A packed file on this computer.
    File(PathBuf),
    /// A packed file at an `https://` address (`http://` only on this computer).
    Url(reqwest::Url),
    /// A packed plugin in an OCI registry.
    Oci(Reference),
    /// A plugin listed by an index, at a version or the newest.
    Name {
        /// Its name in the index.
        name: String,
        /// The version asked for; the newest not yanked when `None`.
        version: Option<String>,
    },
}

impl Source {
    /// Reads `text`. A folder or file that exists wins over a name; `./name` is always a path.
    pub fn parse(text: &str) -> Result<Source, PackageError> {
        if text.starts_with("https://") || text.starts_with("http://") {
            let url = reqwest::Url::parse(text)
                .map_err(|e| PackageError::Refused(format!("{text}: not an address: {e}")))?;
            check_web_url(&url)?;
            return Ok(Source::Url(url));
        }
        if let Some(rest) = text.strip_prefix("oci://") {
            return Ok(Source::Oci(Reference::parse(rest)?));
        }
        if text.contains("://") {
            return Err(PackageError::Refused(format!(
                "{text}: install from a folder, a packed file, an https:// address, an oci:// reference or an index name"
            )));
        }
        let path = PathBuf::from(text);
        if path.is_dir() {
            return Ok(Source::Folder(path));
        }
        if path.exists() {
            return Ok(Source::File(path));
        }
        let (name, version) = match text.split_once('@') {
            Some((name, version)) => (name, Some(version.to_owned())),
            None => (text, None),
        };
        let is_name = !name.is_empty()
            && name.len() <= 64
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !is_name {
            return Err(PackageError::Refused(format!(
                "{text}: no such folder or file (and not a plugin name such as notes or notes@1.2.0)"
            )));
        }
        if let Some(version) = &version {
            semver::Version::parse(version).map_err(|_| {
                PackageError::Refused(format!(
                    "{text}: {version:?} is not a version (MAJOR.MINOR.PATCH, such as 1.2.0)"
                ))
            })?;
        }
        Ok(Source::Name {
            name: name.to_owned(),
            version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_told_apart_and_plain_http_is_only_for_this_computer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("notes-1.0.0.qplugin");
        std::fs::write(&file, b"x").expect("file");
        let text = |p: &std::path::Path| p.to_str().expect("utf-8").to_owned();
        assert_eq!(
            Source::parse(&text(dir.path())).expect("folder"),
            Source::Folder(dir.path().to_owned())
        );
        assert_eq!(
            Source::parse(&text(&file)).expect("file"),
            Source::File(file.clone())
        );
        assert!(matches!(
            Source::parse("https://example.org/notes.qplugin"),
            Ok(Source::Url(_))
        ));
        assert!(matches!(
            Source::parse("http://127.0.0.1:8080/notes.qplugin"),
            Ok(Source::Url(_))
        ));
        let err = Source::parse("http://example.org/notes.qplugin").expect_err("clear");
        assert!(err.to_string().contains("https://"), "{err}");
        assert!(Source::parse("ftp://example.org/x").is_err());
        assert_eq!(
            Source::parse("notes@1.2.0").expect("name"),
            Source::Name {
                name: "notes".into(),
                version: Some("1.2.0".into())
            }
        );
        assert!(Source::parse("notes@latest").is_err());
        assert!(Source::parse("./missing/notes.qplugin").is_err());
    }
}
