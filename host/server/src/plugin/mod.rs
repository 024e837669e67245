//! `quarry plugin ...`: start a connector from a template, check a plugin, pack and push it,
//! install it from anywhere after showing what it asks for, list and remove plugins.

mod describe;
mod indexes;
mod install;
mod obtain;
mod publish;
mod trust;
mod update;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use quarry_api::views::PluginView;
use quarry_core::terminal::printable;
use quarry_packages::pack::MAX_PACK_BYTES;
use quarry_packages::{Lock, Pack};
use quarry_runtime::{MANIFEST_FILE, Plugin, read_bounded};

use crate::cli::PluginCommand;
use crate::setup::{Paths, load_plugins, open_store};
use crate::{plugin_check, scaffold};

/// Runs a plugin command.
pub async fn run(paths: &Paths, command: PluginCommand) -> anyhow::Result<()> {
    match command {
        PluginCommand::New { lang, name, dir } => {
            let parent = match dir {
                Some(dir) => dir,
                None => std::env::current_dir().context("cannot read the current folder")?,
            };
            let created = scaffold::create(lang, &name, &parent)?;
            println!("Created {}.", created.display());
            println!("Next: read its README.md, or");
            println!("  cd {} && ./build.sh", created.display());
            println!(
                "  quarry plugin check . --set {}",
                scaffold::sample_setting(lang)
            );
            println!("  quarry plugin install .");
            Ok(())
        }
        PluginCommand::Check {
            path,
            settings,
            max_docs,
        } => check(paths, &path, &settings, max_docs).await,
        PluginCommand::Remove { id, yes } => remove(paths, &id, yes).await,
        PluginCommand::Install {
            source,
            sha256,
            yes,
            allow_downgrade,
            timeout,
        } => {
            let request = install::Request {
                source,
                sha256,
                yes,
                allow_downgrade,
                timeout: Duration::from_secs(timeout.max(1)),
            };
            install::install(paths, request).await
        }
        PluginCommand::Pack { dir, output, sign } => {
            publish::pack(paths, &dir, output, sign.as_deref())
        }
        PluginCommand::Keygen { output } => publish::keygen(&output),
        PluginCommand::Trust { key, name } => trust::trust(paths, key.as_deref(), name),
        PluginCommand::Untrust { key } => trust::untrust(paths, &key),
        PluginCommand::Update { id, yes, timeout } => {
            update::update(
                paths,
                id.as_deref(),
                yes,
                Duration::from_secs(timeout.max(1)),
            )
            .await
        }
        PluginCommand::Index { command } => indexes::run(paths, command).await,
        PluginCommand::Push {
            file,
            target,
            timeout,
        } => publish::push(&file, &target, Duration::from_secs(timeout.max(1))).await,
        PluginCommand::List { json } => list(paths, json),
    }
}

/// `plugin list`: each plugin, what it asks for, and where it came from.
fn list(paths: &Paths, json: bool) -> anyhow::Result<()> {
    let plugins = load_plugins(paths)?.all();
    let lock = Lock::read(&paths.plugins_lock())?;
    let installed = paths.installed_plugins();
    let locked = |p: &Plugin| {
        (p.dir().parent() == Some(installed.as_path()))
            .then(|| lock.get(p.id()))
            .flatten()
    };
    if json {
        let rows: Vec<PluginView> = plugins
            .iter()
            .map(|p| PluginView::with_folder(p).with_origin(p, &lock, &installed))
            .collect();
        println!("{}", serde_json::to_string(&rows)?);
        return Ok(());
    }
    for p in &plugins {
        describe::describe(p, &p.dir().display().to_string());
        match locked(p) {
            Some(entry) => println!(
                "  source: {}; {} ({})",
                printable(&entry.source),
                entry.verification.describe(),
                printable(&entry.digest)
            ),
            None if p.dir().parent() == Some(installed.as_path()) => {
                println!("  source: not recorded (installed by an older Quarry)");
            }
            None => println!("  source: comes with Quarry"),
        }
        println!();
    }
    for entry in lock.plugins.iter().filter(|p| p.revoked.is_some()) {
        println!(
            "{} {}: REVOKED by its publisher ({}); disabled, not loaded. Update it (`quarry plugin update {}`) or remove it.",
            entry.id,
            entry.version,
            printable(entry.revoked.as_deref().unwrap_or_default()),
            entry.id
        );
    }
    Ok(())
}

/// `plugin check PATH`: a folder as it is, a packed file unpacked into a scratch folder.
async fn check(
    paths: &Paths,
    path: &Path,
    settings: &[String],
    max_docs: usize,
) -> anyhow::Result<()> {
    if path.is_dir() {
        return plugin_check::check(paths, path, settings, max_docs).await;
    }
    let bytes = read_bounded(path, MAX_PACK_BYTES)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let pack = Pack::parse(&bytes).with_context(|| format!("{}", path.display()))?;
    println!(
        "Packed     {}, {}",
        quarry_packages::sha256_digest(&bytes),
        if pack.signature().is_some() {
            "signed"
        } else {
            "not signed"
        }
    );
    let dir = install::unpack_for_check(&pack, &paths.plugin_staging())?;
    let checked = plugin_check::check(paths, &dir, settings, max_docs).await;
    let _ = std::fs::remove_dir_all(&dir);
    checked
}

/// Removes an installed plugin, unless a connector uses it.
async fn remove(paths: &Paths, id: &str, yes: bool) -> anyhow::Result<()> {
    let dir = paths.installed_plugins().join(id);
    if !dir.join(MANIFEST_FILE).is_file() {
        let plugins = load_plugins(paths)?;
        if let Some(plugin) = plugins.get(id) {
            bail!(
                "plugin {id} comes with Quarry (from {}); only plugins installed with `quarry plugin install` can be removed",
                plugin.dir().display()
            );
        }
        let installed: Vec<String> = plugins.all().iter().map(|p| p.id().to_owned()).collect();
        bail!(
            "no plugin {id:?} is installed (plugins: {})",
            installed.join(", ")
        );
    }
    let store = open_store(paths).await?;
    let users: Vec<String> = store
        .connectors()
        .await?
        .into_iter()
        .filter(|c| c.plugin_id == id)
        .map(|c| c.name)
        .collect();
    if !users.is_empty() {
        bail!(
            "connectors use plugin {id}: {}; remove them first (`quarry connector remove NAME`)",
            users.join(", ")
        );
    }
    if !yes {
        if !crate::ask::can_ask() {
            bail!("not removed: no terminal to ask; pass --yes to remove plugin {id}");
        }
        if !crate::ask::confirm(&format!("Remove plugin {id}?"))? {
            println!("Nothing was removed.");
            return Ok(());
        }
    }
    std::fs::remove_dir_all(&dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    Lock::forget(&paths.plugins_lock(), id)?;
    println!("Removed plugin {id}. A running server stops offering it at its next start.");
    Ok(())
}
