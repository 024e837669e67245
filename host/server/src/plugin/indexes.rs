//! `quarry plugin index add|list|remove`: the indexes `plugin install NAME` searches.

use quarry_packages::{Fetcher, Index, Indexes, Url, check_web_url};

use crate::cli::IndexCommand;
use crate::setup::Paths;

/// Runs an index command.
pub async fn run(paths: &Paths, command: IndexCommand) -> anyhow::Result<()> {
    let path = paths.plugin_indexes();
    match command {
        IndexCommand::Add { url, timeout } => {
            let url =
                Url::parse(&url).map_err(|e| anyhow::anyhow!("{url}: not an address: {e}"))?;
            check_web_url(&url)?;
            let fetcher = Fetcher::new(std::time::Duration::from_secs(timeout.max(1)))?;
            let index = Index::fetch(&fetcher, &url).await?;
            Indexes::add(&path, &url)?;
            println!(
                "Added {url}: it lists {} plugin(s): {}.",
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
        IndexCommand::Remove { url } => {
            if Indexes::remove(&path, &url)? {
                println!("Removed {url}.");
            } else {
                anyhow::bail!("{url} is not one of the indexes (`quarry plugin index list`)");
            }
        }
    }
    Ok(())
}
