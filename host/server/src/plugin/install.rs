//! `quarry plugin install SOURCE`: from a folder, a packed file, an `https://` address, an
//! OCI registry or an index. Bytes from elsewhere are checked before anything reads them
//! (`obtain.rs`); the plugin is staged and loaded; the user sees what it asks for and how it
//! was verified, and grants it (or `--yes`); then it is installed and recorded in
//! `plugins.lock`. `plugin update` places newer versions the same way (`update.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use quarry_core::terminal::printable;
use quarry_packages::{Indexes, Lock, Locked, Pack, Source, Trusted};
use quarry_runtime::{MANIFEST_FILE, Manifest, Runtime, StagedPlugin};

use super::obtain::{Obtained, obtain, parse_pin};
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

/// When to ask the user before placing a plugin.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// Always (an install), unless `--yes`.
    Always { yes: bool },
    /// Only when it asks for more than the grants accepted for the version it replaces (an
    /// update), unless `--yes`.
    IfWider { yes: bool },
}

/// Installs the plugin `request` names.
pub async fn install(paths: &Paths, request: Request) -> anyhow::Result<()> {
    let pin = request.sha256.as_deref().map(parse_pin).transpose()?;
    let source = Source::parse(&request.source)?;
    let trusted = Trusted::read(&paths.trusted_publishers())?;
    let indexes = Indexes::read(&paths.plugin_indexes())?;
    let obtained = obtain(
        &source,
        &request.source,
        pin.as_deref(),
        &trusted,
        &indexes,
        request.timeout,
    )
    .await?;
    let runtime = plugin_runtime(paths)?;
    place(
        paths,
        &runtime,
        obtained,
        Ask::Always { yes: request.yes },
        request.allow_downgrade,
    )?;
    Ok(())
}

/// Stages `obtained`, shows it, asks as `ask` says, installs it and records it: whether it was
/// installed.
pub fn place(
    paths: &Paths,
    runtime: &Runtime,
    obtained: Obtained,
    ask: Ask,
    allow_downgrade: bool,
) -> anyhow::Result<bool> {
    let manifest = Manifest::parse(&obtained.manifest)
        .map_err(|e| anyhow::anyhow!("{}: {MANIFEST_FILE}: {e}", obtained.source))?;
    let plugins = load_plugins_with(runtime, paths)?;
    plugins.check_installable(&manifest.id, &paths.installed_plugins())?;
    let lock_path = paths.plugins_lock();
    let lock = Lock::read(&lock_path)?;
    let installed = plugins
        .get(&manifest.id)
        .map(|p| p.manifest().version.clone())
        .or_else(|| lock.get(&manifest.id).map(|l| l.version.clone()));
    check_not_downgrade(&manifest, installed.as_deref(), allow_downgrade)?;
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
    super::describe::describe(&staged.plugin, &obtained.source);
    println!(
        "  verified: {} ({})",
        obtained.verification.describe(),
        obtained.digest
    );
    if let Some(signer) = &obtained.signed_by {
        println!("  signed by {}", printable(signer));
    }
    let grants = staged.plugin.requested_capabilities();
    let wider: Vec<&String> = match lock.get(&manifest.id) {
        Some(previous) => grants
            .iter()
            .filter(|g| !previous.grants.contains(g))
            .collect(),
        None => grants.iter().collect(),
    };
    if let (Some(version), Some(_)) = (&installed, lock.get(&manifest.id)) {
        if wider.is_empty() {
            println!("  replaces version {version} and asks for nothing more than it");
        } else {
            println!("  replaces version {version} and asks for more than it:");
        }
        for grant in &wider {
            println!("    + {}", printable(grant));
        }
    }
    let ask_now = match ask {
        Ask::Always { yes } => (!yes).then_some(grants.iter().collect::<Vec<_>>()),
        Ask::IfWider { yes } => (!yes && !wider.is_empty()).then_some(wider.clone()),
    };
    if let Some(asks) = ask_now
        && !granted(&staged, &asks)?
    {
        staged.discard();
        println!("Nothing was installed.");
        return Ok(false);
    }
    let plugin = staged.install(runtime, &paths.installed_plugins())?;
    Lock::record(
        &lock_path,
        Locked {
            id: plugin.id().to_owned(),
            version: plugin.manifest().version.clone(),
            source: obtained.source.clone(),
            digest: obtained.digest.clone(),
            verification: obtained.verification.clone(),
            signed_by: obtained.signed_by.clone(),
            index: obtained.index.clone(),
            revoked: None,
            grants,
            installed_at: quarry_core::times::rfc3339(quarry_store::now_ms()),
        },
    )
    .context("installed, but the lock of installed plugins could not be written")?;
    println!(
        "Installed {} {} in {}. A running server loads it at its next start (the settings page installs without a restart).",
        plugin.manifest().name,
        plugin.manifest().version,
        plugin.dir().display()
    );
    Ok(true)
}

/// Whether the user grants `asks` to the staged plugin, answered at a terminal. Without one,
/// an error naming them and `--yes`.
fn granted(staged: &StagedPlugin, asks: &[&String]) -> anyhow::Result<bool> {
    let asks: Vec<&str> = asks.iter().map(|a| a.as_str()).collect();
    if !crate::ask::can_ask() {
        bail!(
            "not installed: no terminal to ask whether to grant {} {} what it asks for ({}); pass --yes to grant it",
            staged.plugin.id(),
            staged.plugin.manifest().version,
            asks.join("; ")
        );
    }
    crate::ask::confirm("Grant this plugin what it asks for and install it?")
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
