//! `quarry plugin index add|list|remove|push`: the indexes `plugin install NAME` searches, and
//! publishing one to an OCI registry.

use std::time::Duration;

use anyhow::Context;
use quarry_packages::oci::{self, Reference};
use quarry_packages::{Fetcher, Index, Indexes, Url, check_web_url};
use quarry_runtime::read_bounded;

use crate::cli::IndexCommand;
use crate::setup::Paths;

/// The largest index file pushed.
const MAX_INDEX_FILE: u64 = 8 << 20;

/// Runs an index command.
pub async fn run(paths: &Paths, command: IndexCommand) -> anyhow::Result<()> {
    let path = paths.plugin_indexes();
    match command {
        IndexCommand::Add { location, timeout } => {
            match location.strip_prefix("oci://") {
                Some(reference) => {
                    Reference::parse(reference)?;
                }
                None => {
                    let url = Url::parse(&location)
                        .map_err(|e| anyhow::anyhow!("{location}: not an address: {e}"))?;
                    check_web_url(&url)?;
                }
            }
            let fetcher = Fetcher::new(Duration::from_secs(timeout.max(1)))?;
            let index = Index::fetch(&fetcher, &location).await?;
            Indexes::add(&path, &location)?;
            println!(
                "Added {location}: it lists {} plugin(s): {}.",
                index.plugins.len(),
                index.plugins.keys().cloned().collect::<Vec<_>>().join(", ")
            );
        }
        IndexCommand::List => {
            let list = Indexes::read(&path)?;
            if list.indexes.is_empty() {
                println!("No plugin index. Add one with `quarry plugin index add URL`.");
            }
            for entry in &list.indexes {
                println!("{}", entry.url);
            }
        }
        IndexCommand::Remove { location } => {
            if Indexes::remove(&path, &location)? {
                println!("Removed {location}.");
            } else {
                anyhow::bail!("{location} is not one of the indexes (`quarry plugin index list`)");
            }
        }
        IndexCommand::Push {
            file,
            target,
            timeout,
        } => {
            let bytes = read_bounded(&file, MAX_INDEX_FILE)
                .with_context(|| format!("cannot read {}", file.display()))?;
            Index::parse(&bytes)
                .map_err(|e| anyhow::anyhow!("{}: not a plugin index: {e}", file.display()))?;
            let Some(reference) = target.strip_prefix("oci://") else {
                anyhow::bail!("{target}: push to a registry, oci://registry/name:tag");
            };
            let reference = Reference::parse(reference)?;
            let fetcher = Fetcher::new(Duration::from_secs(timeout.max(1)))?;
            let pushed = oci::push_index(fetcher, &bytes, &reference).await?;
            println!("Pushed the index to {reference}.");
            println!("{}", pushed.digest);
            println!("Users add it with: quarry plugin index add {reference}");
        }
    }
    Ok(())
}
