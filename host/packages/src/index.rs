//! Plugin indexes: catalogues of published plugins, each version with where its packed file
//! is and the sha256 it must have, and whether its publisher yanked it (no longer offered,
//! still installable by its exact version) or revoked it (never installed, and disabled where
//! it is). The user lists the indexes they use in `plugin-indexes.toml` in the data folder.
//!
//! An index is JSON served over HTTPS, or kept in an OCI registry as an artifact whose layer
//! is the JSON (`quarry plugin index push`, or `oras push`):
//!
//! ```json
//! {"quarry-plugin-index": 1,
//!  "plugins": {"notes": {"versions": [
//!    {"version": "1.2.0", "source": "https://example.org/notes-1.2.0.qplugin",
//!     "sha256": "sha256:<64 hex>"},
//!    {"version": "1.1.0", "source": "oci://ghcr.io/me/notes:1.1.0", "sha256": "sha256:...",
//!     "revoked": "it sent your notes' titles to its publisher"}]}}}
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use reqwest::Url;
use serde::{Deserialize, Serialize};

use crate::error::PackageError;
use crate::fetch::Fetcher;
use crate::oci::{self, Reference, is_sha256_digest};
use crate::state;

/// The list of indexes' file name in the data folder.
pub const INDEXES_FILE: &str = "plugin-indexes.toml";
/// The largest index read.
const MAX_INDEX_BYTES: u64 = 8 << 20;
/// The largest list of indexes read.
const MAX_LIST_BYTES: u64 = 1 << 20;

/// One published version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// Its version (semantic).
    pub version: String,
    /// Where its packed file is: `https://...` or `oci://...`.
    pub source: String,
    /// The packed file's sha256, `sha256:<hex>`.
    pub sha256: String,
    /// Why the publisher withdrew it, when they did: not offered, installable by exact
    /// version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yanked: Option<String>,
    /// Why the publisher revoked it, when they did: never installed, disabled where it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<String>,
}

/// A plugin's entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listing {
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its versions.
    pub versions: Vec<Release>,
}

/// An index's contents.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    /// The format's version: 1.
    #[serde(rename = "quarry-plugin-index")]
    pub format: u32,
    /// The plugins, by id.
    pub plugins: BTreeMap<String, Listing>,
}

impl Index {
    /// Fetches and checks the index at `location`: an `https://` address (`http://` on this
    /// computer) or an `oci://` reference.
    pub async fn fetch(fetcher: &Fetcher, location: &str) -> Result<Index, PackageError> {
        let bytes = match location.strip_prefix("oci://") {
            Some(reference) => {
                let reference = Reference::parse(reference)?;
                oci::pull_index(fetcher.clone(), &reference, MAX_INDEX_BYTES).await?
            }
            None => {
                let url = Url::parse(location).map_err(|e| {
                    PackageError::Refused(format!("{location}: not an address: {e}"))
                })?;
                fetcher.get(&url, MAX_INDEX_BYTES).await?
            }
        };
        Index::parse(&bytes).map_err(|message| PackageError::Fetch {
            url: location.to_owned(),
            message: format!("not a Quarry plugin index: {message}"),
        })
    }

    /// Reads an index from its bytes: each version semantic, each digest sha256.
    pub fn parse(bytes: &[u8]) -> Result<Index, String> {
        let index: Index = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if index.format != 1 {
            return Err(format!(
                "format {}; this Quarry reads format 1: update Quarry",
                index.format
            ));
        }
        for (id, listing) in &index.plugins {
            for release in &listing.versions {
                if semver::Version::parse(&release.version).is_err() {
                    return Err(format!("{id} {:?} is not a version", release.version));
                }
                if !is_sha256_digest(&release.sha256) {
                    return Err(format!(
                        "{id} {}: sha256 {:?} is not sha256:<64 hex>",
                        release.version, release.sha256
                    ));
                }
            }
        }
        Ok(index)
    }

    /// The release of `id` to install: `version` exactly (yanked or not, never revoked), or
    /// else the newest neither yanked nor revoked.
    pub fn pick(&self, id: &str, version: Option<&str>) -> Result<&Release, String> {
        let listing = self
            .plugins
            .get(id)
            .ok_or_else(|| format!("it lists no plugin {id:?}"))?;
        if let Some(version) = version {
            let release = listing
                .versions
                .iter()
                .find(|r| r.version == version)
                .ok_or_else(|| {
                    format!(
                        "it lists no {id} {version} (it lists {})",
                        listing
                            .versions
                            .iter()
                            .map(|r| r.version.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })?;
            if let Some(reason) = &release.revoked {
                return Err(format!(
                    "{id} {version} is revoked by its publisher: {reason}"
                ));
            }
            return Ok(release);
        }
        self.newest(id)
            .ok_or_else(|| format!("every version of {id} it lists is yanked or revoked"))
    }

    /// The newest release of `id` neither yanked nor revoked.
    pub fn newest(&self, id: &str) -> Option<&Release> {
        self.plugins
            .get(id)?
            .versions
            .iter()
            .filter(|r| r.yanked.is_none() && r.revoked.is_none())
            .filter_map(|r| Some((semver::Version::parse(&r.version).ok()?, r)))
            .max_by(|(a, _), (b, _)| a.cmp(b))
            .map(|(_, r)| r)
    }

    /// The release `version` of `id`, if listed.
    pub fn release(&self, id: &str, version: &str) -> Option<&Release> {
        self.plugins
            .get(id)?
            .versions
            .iter()
            .find(|r| r.version == version)
    }
}

/// One index the user added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexEntry {
    /// Its address, or `oci://` reference.
    pub url: String,
}

/// The indexes the user added, searched in order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Indexes {
    /// Each.
    #[serde(default, rename = "index")]
    pub indexes: Vec<IndexEntry>,
}

impl Indexes {
    /// Reads the list at `path`; none there is no index.
    pub fn read(path: &Path) -> Result<Indexes, PackageError> {
        state::read(path, MAX_LIST_BYTES)
    }

    /// Adds `location` (an address or `oci://` reference) at the end (once).
    pub fn add(path: &Path, location: &str) -> Result<(), PackageError> {
        Indexes::change(path, |list| {
            if !list.indexes.iter().any(|i| i.url == location) {
                list.indexes.push(IndexEntry {
                    url: location.to_owned(),
                });
            }
        })
    }

    /// Removes `url`: whether it was there.
    pub fn remove(path: &Path, url: &str) -> Result<bool, PackageError> {
        let mut removed = false;
        Indexes::change(path, |list| {
            let before = list.indexes.len();
            list.indexes.retain(|i| i.url != url);
            removed = list.indexes.len() != before;
        })?;
        Ok(removed)
    }

    fn change(path: &Path, change: impl FnOnce(&mut Indexes)) -> Result<(), PackageError> {
        let header = "# The plugin indexes `quarry plugin install NAME` searches, in order (`quarry plugin index`).\n";
        state::change(path, MAX_LIST_BYTES, header, change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> Index {
        let digest = format!("sha256:{}", "a".repeat(64));
        let text = serde_json::json!({
            "quarry-plugin-index": 1,
            "plugins": {"notes": {"versions": [
                {"version": "1.0.0", "source": "https://x/1", "sha256": digest},
                {"version": "1.10.0", "source": "https://x/3", "sha256": digest, "yanked": "broke"},
                {"version": "1.2.0", "source": "https://x/2", "sha256": digest},
                {"version": "2.0.0", "source": "https://x/4", "sha256": digest, "revoked": "malware"},
            ]}}
        });
        Index::parse(text.to_string().as_bytes()).expect("index")
    }

    #[test]
    fn the_newest_offered_version_is_picked_and_revoked_ones_never() {
        let index = index();
        assert_eq!(index.pick("notes", None).expect("newest").version, "1.2.0");
        assert_eq!(
            index
                .pick("notes", Some("1.10.0"))
                .expect("yanked, exact")
                .version,
            "1.10.0"
        );
        let revoked = index.pick("notes", Some("2.0.0")).expect_err("revoked");
        assert!(revoked.contains("malware"), "{revoked}");
        assert!(index.pick("notes", Some("3.0.0")).is_err());
        assert!(index.pick("other", None).is_err());
        let bad = r#"{"quarry-plugin-index": 1, "plugins": {"n": {"versions": [{"version": "x", "source": "s", "sha256": "sha256:00"}]}}}"#;
        assert!(Index::parse(bad.as_bytes()).is_err());
    }
}
