//! `quarry plugin ...`: start a connector from a template, check a plugin folder, install a
//! plugin after showing what it asks for, list and remove plugins.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, bail};
use quarry_api::views::PluginView;
use quarry_core::terminal::printable;
use quarry_runtime::{
    MANIFEST_FILE, MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES, Manifest, Plugin, read_bounded,
    read_bounded_text,
};

use crate::cli::PluginCommand;
use crate::setup::{Paths, load_plugins, load_plugins_with, open_store, plugin_runtime};
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
        } => plugin_check::check(paths, &path, &settings, max_docs).await,
        PluginCommand::Remove { id } => remove(paths, &id).await,
        PluginCommand::Install { path, yes } => install(paths, &path, yes),
        PluginCommand::List { json } => {
            let plugins = load_plugins(paths)?.all();
            if json {
                let rows: Vec<PluginView> = plugins.iter().map(PluginView::with_folder).collect();
                println!("{}", serde_json::to_string(&rows)?);
            } else {
                for p in &plugins {
                    describe(p, p.dir());
                    println!();
                }
            }
            Ok(())
        }
    }
}

fn describe(plugin: &Plugin, from: &std::path::Path) {
    let m = plugin.manifest();
    println!(
        "{} {} ({}, WIT {})",
        printable(&m.name),
        printable(&m.version),
        printable(&m.id),
        printable(&m.wit)
    );
    println!("  {}", printable(&m.description));
    println!("  from {}", printable(&from.display().to_string()));
    for ask in plugin.requested_capabilities() {
        println!("  - {}", printable(&ask.to_string()));
    }
}

fn install(paths: &Paths, folder: &std::path::Path, yes: bool) -> anyhow::Result<()> {
    let manifest_path = folder.join(MANIFEST_FILE);
    let manifest_text = read_bounded_text(&manifest_path, MAX_MANIFEST_BYTES)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let manifest = Manifest::parse(&manifest_text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", manifest_path.display()))?;
    let component_path = manifest.component_path(folder);
    let component = read_bounded(&component_path, MAX_COMPONENT_BYTES)
        .with_context(|| format!("cannot read {}", component_path.display()))?;
    let runtime = plugin_runtime(paths)?;
    load_plugins_with(&runtime, paths)?
        .check_installable(&manifest.id, &paths.installed_plugins())?;
    let staged = runtime.stage(&manifest_text, &component, &paths.plugin_staging())?;
    describe(&staged.plugin, folder);
    let granted = yes || {
        if !std::io::stdin().is_terminal() {
            staged.discard();
            bail!("not installed: pass --yes to grant what the plugin asks for without a prompt");
        }
        print!("Grant this plugin what it asks for and install it? [y/N] ");
        std::io::stdout().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        matches!(answer.trim(), "y" | "Y" | "yes")
    };
    if !granted {
        staged.discard();
        println!("Nothing was installed.");
        return Ok(());
    }
    let plugin = staged.install(&runtime, &paths.installed_plugins())?;
    println!(
        "Installed {} {} in {}. A running server loads it at its next start (the settings page installs without a restart).",
        plugin.manifest().name,
        plugin.manifest().version,
        plugin.dir().display()
    );
    Ok(())
}

/// Removes an installed plugin, unless a connector uses it.
async fn remove(paths: &Paths, id: &str) -> anyhow::Result<()> {
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
    std::fs::remove_dir_all(&dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    println!("Removed plugin {id}. A running server stops offering it at its next start.");
    Ok(())
}
