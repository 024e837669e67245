//! `quarry plugin update [ID]`: asks the index each plugin came from for newer versions,
//! places them as an install does, but asks the user only when a version asks for more than
//! they granted the one it replaces (never silently, without a terminal only with `--yes`).
//! A version its index yanked is reported; one it revoked is reported and disabled: marked in
//! the lock, so Quarry no longer loads it, until it is updated or removed.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::bail;
use quarry_core::terminal::printable;
use quarry_packages::index::IndexEntry;
use quarry_packages::{Fetcher, Index, Indexes, Lock, Locked, Trusted};

use super::install::{Ask, place};
use super::obtain::from_index;
use crate::setup::{Paths, plugin_runtime};

/// Updates plugin `id`, or every plugin installed from an index.
pub async fn update(
    paths: &Paths,
    id: Option<&str>,
    yes: bool,
    timeout: Duration,
) -> anyhow::Result<()> {
    let lock_path = paths.plugins_lock();
    let lock = Lock::read(&lock_path)?;
    let entries: Vec<Locked> = lock
        .plugins
        .into_iter()
        .filter(|p| id.is_none_or(|id| p.id == id))
        .collect();
    if let Some(id) = id
        && entries.is_empty()
    {
        bail!("plugin {id} was not installed with `quarry plugin install`; nothing to update");
    }
    let fetcher = Fetcher::new(timeout)?;
    let trusted = Trusted::read(&paths.trusted_publishers())?;
    let runtime = plugin_runtime(paths)?;
    let mut fetched: BTreeMap<String, Index> = BTreeMap::new();
    let mut failed = Vec::new();
    for entry in &entries {
        let Some(index_url) = &entry.index else {
            println!(
                "{} {}: installed from {}, not from an index; nothing to compare it with.",
                entry.id,
                entry.version,
                printable(&entry.source)
            );
            continue;
        };
        if !fetched.contains_key(index_url) {
            match Index::fetch(&fetcher, index_url).await {
                Ok(index) => {
                    fetched.insert(index_url.clone(), index);
                }
                Err(e) => {
                    eprintln!("{}: cannot be checked: {e}", entry.id);
                    failed.push(entry.id.clone());
                    continue;
                }
            }
        }
        let Some(index) = fetched.get(index_url) else {
            continue;
        };
        report_withdrawn(&lock_path, entry, index)?;
        let newer = index
            .newest(&entry.id)
            .filter(|r| is_newer(&r.version, &entry.version));
        let Some(release) = newer else {
            println!(
                "{} {} is the newest version {index_url} offers.",
                entry.id, entry.version
            );
            continue;
        };
        println!("{} {} -> {}", entry.id, entry.version, release.version);
        let one = Indexes {
            indexes: vec![IndexEntry {
                url: index_url.clone(),
            }],
        };
        let placed = match from_index(
            &entry.id,
            Some(&release.version),
            None,
            &trusted,
            &one,
            timeout,
        )
        .await
        {
            Ok(obtained) => place(paths, &runtime, obtained, Ask::IfWider { yes }, false),
            Err(e) => Err(e),
        };
        if let Err(e) = placed {
            eprintln!("{}: not updated: {e:#}", entry.id);
            failed.push(entry.id.clone());
        }
    }
    if !failed.is_empty() {
        bail!("not updated: {}", failed.join(", "));
    }
    Ok(())
}

/// Says when `entry`'s version is yanked, and when it is revoked marks it so in the lock.
fn report_withdrawn(
    lock_path: &std::path::Path,
    entry: &Locked,
    index: &Index,
) -> anyhow::Result<()> {
    let Some(release) = index.release(&entry.id, &entry.version) else {
        return Ok(());
    };
    if let Some(reason) = &release.revoked {
        Lock::update(lock_path, |lock| {
            for locked in &mut lock.plugins {
                if locked.id == entry.id && locked.version == entry.version {
                    locked.revoked = Some(reason.clone());
                }
            }
        })?;
        println!(
            "{} {} is REVOKED by its publisher: {}. It is disabled: Quarry no longer loads it (update it, or `quarry plugin remove {} --yes`).",
            entry.id,
            entry.version,
            printable(reason),
            entry.id
        );
    } else if let Some(reason) = &release.yanked {
        println!(
            "{} {} is yanked by its publisher: {}.",
            entry.id,
            entry.version,
            printable(reason)
        );
    }
    Ok(())
}

/// Whether version `candidate` is newer than `installed`.
fn is_newer(candidate: &str, installed: &str) -> bool {
    match (
        semver::Version::parse(candidate),
        semver::Version::parse(installed),
    ) {
        (Ok(candidate), Ok(installed)) => candidate > installed,
        _ => false,
    }
}
