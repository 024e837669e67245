//! `quarry plugin ...`: install a plugin after showing what it asks for, and list plugins.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, bail};
use quarry_runtime::{MANIFEST_FILE, Manifest, Plugin};
use serde_json::json;

use crate::cli::PluginCommand;
use crate::setup::{Paths, load_plugins, plugin_runtime};

/// Runs a plugin command.
pub fn run(paths: &Paths, command: PluginCommand) -> anyhow::Result<()> {
    match command {
        PluginCommand::Install { path, yes } => install(paths, &path, yes),
        PluginCommand::List { json } => {
            let plugins = load_plugins(paths)?.all();
            if json {
                let rows: Vec<_> = plugins
                    .iter()
                    .map(|p| {
                        let m = p.manifest();
                        json!({
                            "id": m.id, "name": m.name, "version": m.version, "wit": m.wit,
                            "folder": p.dir().display().to_string(),
                            "capabilities": p.requested_capabilities(),
                        })
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(rows));
            } else {
                for p in &plugins {
                    describe(p);
                    println!();
                }
            }
            Ok(())
        }
    }
}

fn describe(plugin: &Plugin) {
    let m = plugin.manifest();
    println!("{} {} ({}, WIT {})", m.name, m.version, m.id, m.wit);
    println!("  {}", m.description);
    println!("  from {}", plugin.dir().display());
    for ask in plugin.requested_capabilities() {
        println!("  - {ask}");
    }
}

fn install(paths: &Paths, folder: &std::path::Path, yes: bool) -> anyhow::Result<()> {
    let manifest_path = folder.join(MANIFEST_FILE);
    let manifest_text = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let manifest = Manifest::parse(&manifest_text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", manifest_path.display()))?;
    let component_path = manifest.component_path(folder);
    let component = std::fs::read(&component_path)
        .with_context(|| format!("cannot read {}", component_path.display()))?;
    let runtime = plugin_runtime(paths)?;
    let staged = runtime.stage(&manifest_text, &component, &paths.plugin_staging())?;
    describe(&staged.plugin);
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
