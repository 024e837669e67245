//! Where an installed plugin's files come from, verified before anything else reads them: a
//! folder of the user's, a packed file, an `https://` address, an OCI registry, or an index
//! that names one of those and the sha256 its file must have.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use quarry_packages::oci;
use quarry_packages::pack::MAX_PACK_BYTES;
use quarry_packages::{
    Fetcher, Index, Indexes, Pack, PackageError, Source, Trusted, Verification, sha256_digest,
    signature,
};
use quarry_runtime::{
    MANIFEST_FILE, MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES, Manifest, read_bounded,
    read_bounded_text,
};

/// A plugin's files, read and verified, not yet loaded.
pub struct Obtained {
    pub manifest: String,
    pub component: Vec<u8>,
    /// README, licence, signature (a packed plugin's).
    pub extra: Vec<(String, Vec<u8>)>,
    /// The digest checked: of the packed file, the registry's manifest, or the component.
    pub digest: String,
    pub verification: Verification,
    /// The key that signed it, and the name the user trusts it by.
    pub signed_by: Option<String>,
    /// Where it came from, for the lock: as the user wrote it, or the index's source.
    pub source: String,
    /// The index that listed it.
    pub index: Option<String>,
}

/// The plugin's files from `source` (written `text`), verified: against `pin` (a `sha256:`
/// digest) where given, by a signature of a publisher in `trusted`, by the digest an index in
/// `indexes` lists; bytes from elsewhere need one of them (or a registry digest).
pub async fn obtain(
    source: &Source,
    text: &str,
    pin: Option<&str>,
    trusted: &Trusted,
    indexes: &Indexes,
    timeout: Duration,
) -> anyhow::Result<Obtained> {
    let mut obtained = match source {
        Source::Folder(dir) => {
            if pin.is_some() {
                bail!(
                    "--sha256 pins a packed file; {} is a folder of your own (pack it with `quarry plugin pack` to pin it)",
                    dir.display()
                );
            }
            from_folder(dir)?
        }
        Source::File(path) => {
            let bytes = read_bounded(path, MAX_PACK_BYTES)
                .with_context(|| format!("cannot read {}", path.display()))?;
            from_packed(bytes, pin, trusted, Some(Verification::LocalSource))?
        }
        Source::Url(_) | Source::Oci(_) => fetch_remote(source, pin, trusted, timeout).await?,
        Source::Name { name, version } => {
            return from_index(name, version.as_deref(), pin, trusted, indexes, timeout).await;
        }
    };
    obtained.source = match Path::new(text).canonicalize() {
        Ok(path) if !text.contains("://") => path.display().to_string(),
        _ => text.to_owned(),
    };
    Ok(obtained)
}

/// A packed plugin at an `https://` address or in a registry.
async fn fetch_remote(
    source: &Source,
    pin: Option<&str>,
    trusted: &Trusted,
    timeout: Duration,
) -> anyhow::Result<Obtained> {
    match source {
        Source::Url(url) => {
            let bytes = Fetcher::new(timeout)?.get(url, MAX_PACK_BYTES).await?;
            from_packed(bytes, pin, trusted, None).with_context(|| format!("{url}: not installed"))
        }
        Source::Oci(reference) => {
            let (packed, manifest_digest) = oci::pull(Fetcher::new(timeout)?, reference).await?;
            let by_digest = reference
                .digest
                .is_some()
                .then_some(Verification::OciDigest);
            let mut obtained =
                from_packed(packed, pin, trusted, by_digest).with_context(|| match &reference.tag {
                    Some(_) if reference.digest.is_none() => format!(
                        "{reference}: not installed (a tag can be moved to other bytes at any time: pin the plugin as oci://{}/{}@sha256:<digest>, the digest `quarry plugin push` printed)",
                        reference.registry, reference.repository
                    ),
                    _ => format!("{reference}: not installed"),
                })?;
            if obtained.verification == Verification::OciDigest {
                obtained.digest = manifest_digest;
            }
            Ok(obtained)
        }
        _ => bail!(
            "a plugin index lists its plugins at https:// addresses and oci:// references only"
        ),
    }
}

/// The plugin `id` at `version` (else the newest offered) from the first of `indexes` that
/// lists it, verified by the sha256 the index gives.
pub async fn from_index(
    id: &str,
    version: Option<&str>,
    pin: Option<&str>,
    trusted: &Trusted,
    indexes: &Indexes,
    timeout: Duration,
) -> anyhow::Result<Obtained> {
    if indexes.indexes.is_empty() {
        bail!(
            "{id}: no such folder or file here, and no plugin index is configured to find it by name: add one with `quarry plugin index add URL`, or give a folder, a packed file, an https:// address with --sha256, or an oci:// reference"
        );
    }
    let fetcher = Fetcher::new(timeout)?;
    let mut why_not = Vec::new();
    for entry in &indexes.indexes {
        let url = &entry.url;
        let index = match Index::fetch(&fetcher, url).await {
            Ok(index) => index,
            Err(e) => {
                why_not.push(e.to_string());
                continue;
            }
        };
        let release = match index.pick(id, version) {
            Ok(release) => release.clone(),
            Err(why) => {
                why_not.push(format!("{url}: {why}"));
                continue;
            }
        };
        if let Some(reason) = &release.yanked {
            eprintln!(
                "warning: {id} {} is yanked by its publisher: {reason}",
                release.version
            );
        }
        if let Some(pin) = pin
            && pin != release.sha256
        {
            bail!(
                "{url} lists {id} {} with {}, not the --sha256 you gave: nothing was installed",
                release.version,
                release.sha256
            );
        }
        let source = Source::parse(&release.source)?;
        let mut obtained = fetch_remote(&source, Some(&release.sha256), trusted, timeout)
            .await
            .with_context(|| format!("{id} {} as {url} lists it", release.version))?;
        let manifest = Manifest::parse(&obtained.manifest)
            .map_err(|e| anyhow::anyhow!("{}: {e}", release.source))?;
        if manifest.id != id || manifest.version != release.version {
            bail!(
                "{} holds {} {}, not the {id} {} that {url} lists: nothing was installed; tell the index's publisher",
                release.source,
                manifest.id,
                manifest.version,
                release.version
            );
        }
        if obtained.verification == Verification::Sha256Pin {
            obtained.verification = Verification::IndexDigest;
        }
        obtained.source = release.source.clone();
        obtained.index = Some(url.to_string());
        return Ok(obtained);
    }
    bail!("{id}: not installed: {}", why_not.join("; "))
}

/// A plugin folder of the user's: its manifest and component.
fn from_folder(dir: &Path) -> anyhow::Result<Obtained> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest = read_bounded_text(&manifest_path, MAX_MANIFEST_BYTES)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let parsed = Manifest::parse(&manifest)
        .map_err(|e| anyhow::anyhow!("{}: {e}", manifest_path.display()))?;
    let component_path = parsed.component_path(dir);
    let component = read_bounded(&component_path, MAX_COMPONENT_BYTES)
        .with_context(|| format!("cannot read {}", component_path.display()))?;
    Ok(Obtained {
        digest: sha256_digest(&component),
        manifest,
        component,
        extra: Vec::new(),
        verification: Verification::LocalSource,
        signed_by: None,
        source: String::new(),
        index: None,
    })
}

/// A packed file's plugin: its bytes checked against `pin` before anything reads them, its
/// signature checked when it has one (one that does not match refuses it), and verified by
/// a trusted signature, else the pin, else `otherwise` (a source that needs neither); with
/// none of them, refused, saying how to pin or trust it.
fn from_packed(
    bytes: Vec<u8>,
    pin: Option<&str>,
    trusted: &Trusted,
    otherwise: Option<Verification>,
) -> anyhow::Result<Obtained> {
    let digest = sha256_digest(&bytes);
    if let Some(pin) = pin
        && pin != digest
    {
        return Err(PackageError::DigestMismatch {
            expected: pin.to_owned(),
            actual: digest,
        }
        .into());
    }
    let pack = Pack::parse(&bytes)?;
    let signer = signature::verify(&pack)?;
    let publisher = signer.as_ref().and_then(|key| trusted.find(key));
    let verification = match (publisher, pin, otherwise) {
        (Some(_), _, _) => Verification::TrustedSignature,
        (None, Some(_), _) => Verification::Sha256Pin,
        (None, None, Some(otherwise)) => otherwise,
        (None, None, None) => match &signer {
            Some(key) => bail!(
                "it is signed by {key}, a key you do not trust. If you know it is the publisher's, trust it with `quarry plugin trust {key} --name NAME`; or pin the file with --sha256 {}",
                digest.trim_start_matches("sha256:")
            ),
            None => bail!(
                "it is not signed, and nothing pins it: give --sha256 HEX, the hash its publisher gave for the file (`sha256sum FILE`), or install it from the folder or file you have"
            ),
        },
    };
    Ok(Obtained {
        manifest: pack.manifest_text().to_owned(),
        component: pack.component().to_vec(),
        extra: pack
            .extra_files()
            .into_iter()
            .map(|(name, bytes)| (name.to_owned(), bytes.to_vec()))
            .collect(),
        digest,
        verification,
        signed_by: signer.map(|key| match publisher {
            Some(p) => format!("{key} ({})", p.name),
            None => key.to_string(),
        }),
        source: String::new(),
        index: None,
    })
}

/// `HEX` or `sha256:HEX` as `sha256:hex`.
pub fn parse_pin(text: &str) -> anyhow::Result<String> {
    let hex = text.trim().strip_prefix("sha256:").unwrap_or(text.trim());
    let pin = format!("sha256:{}", hex.to_ascii_lowercase());
    if !oci::is_sha256_digest(&pin) {
        bail!("--sha256 {text:?}: give the 64 hex digits of the file's sha256 (`sha256sum FILE`)");
    }
    Ok(pin)
}
