//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Quarry: local search over your own data, for agents and scripts.
#[derive(Debug, Parser)]
#[command(name = "quarry", version)]
pub struct Cli {
    #[command(flatten)]
    pub plugins: PluginOptions,
    #[command(subcommand)]
    pub command: Command,
}

/// Where plugins come from and where their compiled form is cached.
#[derive(Debug, Args)]
pub struct PluginOptions {
    /// Folder of plugin folders (each with a quarry-plugin.toml); `make plugins` builds them
    /// into target/plugins.
    #[arg(
        long,
        env = "QUARRY_PLUGINS_DIR",
        global = true,
        default_value = "target/plugins"
    )]
    pub plugins_dir: PathBuf,
    /// Where compiled components are cached [default: $XDG_CACHE_HOME/quarry/components].
    #[arg(long, env = "QUARRY_COMPONENT_CACHE", global = true)]
    pub component_cache: Option<PathBuf>,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List and extract a folder through the folder plugin, and print what would be indexed.
    Scan(ScanArgs),
}

/// Arguments of `quarry scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The folder to scan.
    pub path: PathBuf,
    /// One JSON object per document instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl PluginOptions {
    /// The component cache folder.
    pub fn cache_dir(&self) -> PathBuf {
        if let Some(dir) = &self.component_cache {
            return dir.clone();
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("quarry/components")
    }
}
