//! `quarry plugin trust [KEY]` and `plugin untrust KEY`: the publishers whose signed plugins
//! install without a pin.

use anyhow::bail;
use quarry_core::terminal::printable;
use quarry_packages::{PublicKey, Trusted};

use crate::setup::Paths;

/// Trusts `key` as `name`; without a key, lists the trusted publishers.
pub fn trust(paths: &Paths, key: Option<&str>, name: Option<String>) -> anyhow::Result<()> {
    let path = paths.trusted_publishers();
    let Some(key) = key else {
        let trusted = Trusted::read(&path)?;
        if trusted.publishers.is_empty() {
            println!(
                "No publisher is trusted. Trust one with `quarry plugin trust ed25519:... --name NAME`."
            );
        }
        for p in &trusted.publishers {
            println!("{}  {} (since {})", p.key, printable(&p.name), p.added_at);
        }
        return Ok(());
    };
    let key: PublicKey = key.parse()?;
    let Some(name) = name.filter(|n| !n.trim().is_empty()) else {
        bail!("give the publisher a name you will recognise: --name NAME");
    };
    Trusted::add(
        &path,
        &key,
        name.trim(),
        &quarry_core::times::rfc3339(quarry_store::now_ms()),
    )?;
    println!(
        "Trusted {key} as {}: plugins it signed install without --sha256.",
        printable(name.trim())
    );
    Ok(())
}

/// Stops trusting `key`.
pub fn untrust(paths: &Paths, key: &str) -> anyhow::Result<()> {
    let key: PublicKey = key.parse()?;
    if Trusted::remove(&paths.trusted_publishers(), &key)? {
        println!("No longer trusted: {key}. Plugins installed already stay installed.");
    } else {
        println!("{key} was not trusted.");
    }
    Ok(())
}
