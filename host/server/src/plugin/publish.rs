//! `quarry plugin pack DIR` and `quarry plugin push FILE oci://...`: what a plugin's author
//! runs to hand the plugin to others.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use quarry_packages::oci::{self, Reference};
use quarry_packages::pack::MAX_PACK_BYTES;
use quarry_packages::{Fetcher, Pack, SecretKey, sha256_digest, signature};
use quarry_runtime::{Limits, read_bounded};

use crate::setup::{Paths, plugin_runtime};

/// Packs the plugin in `dir` into `output` (`<id>-<version>.qplugin` beside the current
/// folder by default), after loading it as an install would.
pub fn pack(
    paths: &Paths,
    dir: &Path,
    output: Option<PathBuf>,
    sign: Option<&Path>,
) -> anyhow::Result<()> {
    let mut pack = Pack::from_folder(dir)?;
    if let Some(key_file) = sign {
        let key = SecretKey::read(key_file)?;
        pack = signature::sign(pack, &key)?;
        println!("Signed by {}.", key.public());
    }
    plugin_runtime(paths)?
        .load(dir, Limits::default())
        .with_context(|| format!("{} is not a plugin Quarry can run", dir.display()))?;
    let bytes = pack.to_bytes()?;
    let output = output.unwrap_or_else(|| PathBuf::from(pack.file_name()));
    let partial = output.with_extension("qplugin.partial");
    std::fs::write(&partial, &bytes)
        .with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, &output)
        .with_context(|| format!("cannot write {}", output.display()))?;
    let m = pack.manifest();
    println!(
        "Packed {} {} ({}) into {} ({} KiB).",
        m.name,
        m.version,
        m.id,
        output.display(),
        bytes.len().div_ceil(1024)
    );
    println!("{}", sha256_digest(&bytes));
    println!(
        "Others install it with: quarry plugin install https://.../{} --sha256 {}",
        pack.file_name(),
        sha256_digest(&bytes).trim_start_matches("sha256:")
    );
    Ok(())
}

/// Pushes the packed plugin `file` to the registry at `target` (`oci://registry/name:tag`)
/// and prints the digest that pins it.
pub async fn push(file: &Path, target: &str, timeout: Duration) -> anyhow::Result<()> {
    let Some(rest) = target.strip_prefix("oci://") else {
        anyhow::bail!("{target}: push to a registry, oci://registry/name:tag");
    };
    let reference = Reference::parse(rest)?;
    let bytes = read_bounded(file, MAX_PACK_BYTES)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let pack = Pack::parse(&bytes).with_context(|| format!("{}", file.display()))?;
    let pushed = oci::push(Fetcher::new(timeout)?, &pack, &reference).await?;
    let m = pack.manifest();
    println!("Pushed {} {} to {reference}.", m.id, m.version);
    println!("{}", pushed.digest);
    println!(
        "Others install it with: quarry plugin install {}",
        pushed.pinned
    );
    Ok(())
}

/// Writes a new secret key to `output` and prints its public key.
pub fn keygen(output: &Path) -> anyhow::Result<()> {
    let key = SecretKey::generate()?;
    key.write_new(output)?;
    println!(
        "Wrote a secret key to {} (readable by you only: keep it so, and keep a copy somewhere safe).",
        output.display()
    );
    println!("{}", key.public());
    println!(
        "Sign with: quarry plugin pack DIR --sign {}; give others the key above for `quarry plugin trust`.",
        output.display()
    );
    Ok(())
}
