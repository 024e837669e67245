//! `quarry plugin install SOURCE`: from a folder, a packed file, an `https://` address or an
//! OCI registry. Bytes from elsewhere are checked before anything reads them (the `--sha256`
//! pin, the registry digest); the plugin is staged and loaded; the user sees what it asks for
//! and how it was verified, and grants it (or `--yes`); then it is installed and recorded in
//! `plugins.lock`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use quarry_core::terminal::printable;
use quarry_packages::oci;
use quarry_packages::pack::MAX_PACK_BYTES;
use quarry_packages::{
    Fetcher, Lock, Locked, Pack, PackageError, Source, Trusted, Verification, sha256_digest,
    signature,
};
use quarry_runtime::{
    MANIFEST_FILE, MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES, Manifest, Plugin, StagedPlugin,
    read_bounded, read_bounded_text,
};

use crate::setup::{Paths, load_plugins_with, plugin_runtime};

/// What the user asked to install, and how.
pub struct Request {
    /// The source as written.
    pub source: String,
    /// The sha256 the packed file must have.
    pub sha256: Option<String>,
    /// Grant without asking.
    pub yes: bool,
    /// Install an older version over a newer one.
    pub allow_downgrade: bool,
    /// The deadline of each download.
    pub timeout: Duration,
}

/// A plugin's files, read and verified, not yet loaded.
struct Obtained {
    manifest: String,
    component: Vec<u8>,
    /// README, licence, signature (a packed plugin's).
    extra: Vec<(String, Vec<u8>)>,
    /// The digest checked: of the packed file, the registry's manifest, or the component.
    digest: String,
    verification: Verification,
    /// The key that signed it, and the name the user trusts it by.
    signed_by: Option<String>,
}

/// Installs the plugin `request` names.
pub async fn install(paths: &Paths, request: Request) -> anyhow::Result<()> {
    let pin = request.sha256.as_deref().map(parse_pin).transpose()?;
    let source = Source::parse(&request.source)?;
    let trusted = Trusted::read(&paths.trusted_publishers())?;
    let obtained = obtain(&source, pin.as_deref(), &trusted, request.timeout).await?;
    let runtime = plugin_runtime(paths)?;
    let manifest = Manifest::parse(&obtained.manifest)
        .map_err(|e| anyhow::anyhow!("{}: {MANIFEST_FILE}: {e}", request.source))?;
    let plugins = load_plugins_with(&runtime, paths)?;
    plugins.check_installable(&manifest.id, &paths.installed_plugins())?;
    let installed = plugins
        .get(&manifest.id)
        .map(|p| p.manifest().version.clone());
    check_not_downgrade(&manifest, installed.as_deref(), request.allow_downgrade)?;
    let extra: Vec<(&str, &[u8])> = obtained
        .extra
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    let staged = runtime.stage_with_files(
        &obtained.manifest,
        &obtained.component,
        &extra,
        &paths.plugin_staging(),
    )?;
    let lock_path = paths.plugins_lock();
    let lock = Lock::read(&lock_path)?;
    super::describe::describe(&staged.plugin, &request.source);
    println!(
        "  verified: {} ({})",
        obtained.verification.describe(),
        obtained.digest
    );
    if let Some(signer) = &obtained.signed_by {
        println!("  signed by {}", printable(signer));
    }
    let previous = lock.get(&manifest.id);
    let grants = staged.plugin.requested_capabilities();
    if let (Some(version), Some(previous)) = (&installed, previous) {
        let new: Vec<&String> = grants
            .iter()
            .filter(|g| !previous.grants.contains(g))
            .collect();
        println!("  replaces version {version}; asks for more than it:");
        if new.is_empty() {
            println!("    nothing");
        }
        for grant in new {
            println!("    + {}", printable(grant));
        }
    }
    if !granted(request.yes, &staged)? {
        staged.discard();
        println!("Nothing was installed.");
        return Ok(());
    }
    let plugin = staged.install(&runtime, &paths.installed_plugins())?;
    record(&lock_path, &plugin, &request.source, &obtained, grants)?;
    println!(
        "Installed {} {} in {}. A running server loads it at its next start (the settings page installs without a restart).",
        plugin.manifest().name,
        plugin.manifest().version,
        plugin.dir().display()
    );
    Ok(())
}

/// Whether the user grants what the staged plugin asks for: `--yes`, or their answer at a
/// terminal. Without one and without `--yes`, an error naming the flag.
pub fn granted(yes: bool, staged: &StagedPlugin) -> anyhow::Result<bool> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        let asks = staged.plugin.requested_capabilities();
        bail!(
            "not installed: no terminal to ask whether to grant {} what it asks for ({}); pass --yes to grant it",
            staged.plugin.id(),
            asks.join("; ")
        );
    }
    print!("Grant this plugin what it asks for and install it? [y/N] ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// Records the installed plugin in the lock.
fn record(
    lock_path: &Path,
    plugin: &Plugin,
    source: &str,
    obtained: &Obtained,
    grants: Vec<String>,
) -> anyhow::Result<()> {
    let source = match Path::new(source).canonicalize() {
        Ok(path) if !source.contains("://") => path.display().to_string(),
        _ => source.to_owned(),
    };
    Lock::record(
        lock_path,
        Locked {
            id: plugin.id().to_owned(),
            version: plugin.manifest().version.clone(),
            source,
            digest: obtained.digest.clone(),
            verification: obtained.verification.clone(),
            signed_by: obtained.signed_by.clone(),
            grants,
            installed_at: quarry_core::times::rfc3339(quarry_store::now_ms()),
        },
    )
    .context("installed, but the lock of installed plugins could not be written")
}

/// The plugin's files from `source`, verified: against `pin` (a `sha256:` digest) where
/// given, by a signature of a publisher in `trusted`; bytes from elsewhere need one of the two
/// (or a registry digest).
async fn obtain(
    source: &Source,
    pin: Option<&str>,
    trusted: &Trusted,
    timeout: Duration,
) -> anyhow::Result<Obtained> {
    match source {
        Source::Folder(dir) => {
            if pin.is_some() {
                bail!(
                    "--sha256 pins a packed file; {} is a folder of your own (pack it with `quarry plugin pack` to pin it)",
                    dir.display()
                );
            }
            from_folder(dir)
        }
        Source::File(path) => {
            let bytes = read_bounded(path, MAX_PACK_BYTES)
                .with_context(|| format!("cannot read {}", path.display()))?;
            from_packed(bytes, pin, trusted, Some(Verification::LocalSource))
        }
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
        Source::Name { name, .. } => bail!(
            "{name}: no such folder or file here, and no plugin index is configured to find a plugin by name; give a folder, a packed file, an https:// address with --sha256, or an oci:// reference"
        ),
    }
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
    })
}

/// `HEX` or `sha256:HEX` as `sha256:hex`.
fn parse_pin(text: &str) -> anyhow::Result<String> {
    let hex = text.trim().strip_prefix("sha256:").unwrap_or(text.trim());
    let pin = format!("sha256:{}", hex.to_ascii_lowercase());
    if !oci::is_sha256_digest(&pin) {
        bail!("--sha256 {text:?}: give the 64 hex digits of the file's sha256 (`sha256sum FILE`)");
    }
    Ok(pin)
}

/// Refuses to put an older version over a newer one unless asked: a downgrade can bring back
/// what a newer version fixed.
fn check_not_downgrade(
    manifest: &Manifest,
    installed: Option<&str>,
    allow: bool,
) -> anyhow::Result<()> {
    let (Some(installed), Ok(new)) = (installed, semver::Version::parse(&manifest.version)) else {
        return Ok(());
    };
    match semver::Version::parse(installed) {
        Ok(old) if new < old && !allow => bail!(
            "{} {} is older than the installed {installed}: a downgrade can bring back what a newer version fixed. Pass --allow-downgrade if you mean it",
            manifest.id,
            manifest.version
        ),
        _ => Ok(()),
    }
}

/// Where an unpacked plugin is checked (`plugin check FILE`): a fresh folder under `staging`.
pub fn unpack_for_check(pack: &Pack, staging: &Path) -> anyhow::Result<PathBuf> {
    let dir = staging.join(format!(
        "check-{}-{}",
        pack.manifest().id,
        std::process::id()
    ));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for entry in pack.entries() {
        std::fs::write(dir.join(entry.name), entry.bytes)
            .with_context(|| format!("cannot write {}", dir.join(entry.name).display()))?;
    }
    Ok(dir)
}
