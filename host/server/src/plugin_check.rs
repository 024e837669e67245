//! `quarry plugin check PATH`: what an author runs before installing. Loads the plugin as the
//! server would (manifest, WIT world and version, exports, linking), says what it asks for, and
//! with a sample configuration runs `validate-config` and a dry-run listing, summarised.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use quarry_core::terminal::printable;
use quarry_runtime::{FieldKind, Grant, Limits, Plugin, ToFetch, WitVersion};

use crate::connector::read_settings;
use crate::setup::{Paths, plugin_runtime};

/// Texts fetched in the dry run, to show that extraction works.
const TEXTS_TRIED: usize = 3;

/// Checks the plugin in `folder`; an error says what to fix.
pub async fn check(
    paths: &Paths,
    folder: &Path,
    settings: &[String],
    max_docs: usize,
) -> anyhow::Result<()> {
    let runtime = plugin_runtime(paths)?;
    let started = Instant::now();
    let plugin = runtime
        .load(folder, Limits::default())
        .with_context(|| format!("{} is not a plugin Quarry can run", folder.display()))?;
    let m = plugin.manifest();
    println!(
        "Plugin     {} {} ({}), from {}",
        printable(&m.name),
        printable(&m.version),
        printable(&m.id),
        printable(&folder.display().to_string())
    );
    println!(
        "WIT        quarry:connector@{} (this host runs {}); compiled and linked in {:.1} s",
        plugin.wit_version(),
        WitVersion::all_joined(", "),
        started.elapsed().as_secs_f64()
    );
    println!(
        "Exports    quarry:connector/source@{}: {}",
        plugin.wit_version(),
        plugin.wit_version().source_functions().join(", ")
    );
    println!("Imports    {}", packages(plugin.imports()));
    println!("Asks for");
    for ask in plugin.requested_capabilities() {
        println!("  - {}", printable(&ask.to_string()));
    }

    let mut values = read_settings(settings)?;
    let required: Vec<&str> = m
        .config
        .iter()
        .filter(|f| f.required && f.default.is_none() && !values.contains_key(&f.key))
        .map(|f| f.key.as_str())
        .collect();
    if !required.is_empty() {
        println!(
            "Dry run    skipped: give a sample configuration, --set {}=...",
            required.join("=... --set ")
        );
        return Ok(());
    }
    for field in m.config.iter().filter(|f| f.kind == FieldKind::Directory) {
        if let Some(value) = values.get_mut(&field.key) {
            *value = std::path::absolute(value.as_str())
                .with_context(|| format!("{}: cannot resolve {value:?}", field.key))?
                .to_string_lossy()
                .into_owned();
        }
    }
    let summary = tokio::task::spawn_blocking(move || dry_run(&plugin, &values, max_docs))
        .await
        .context("the dry run stopped")??;
    // The summary quotes what the plugin listed and extracted: each line is shown, not acted on.
    for line in summary.lines() {
        println!("{}", printable(line));
    }
    Ok(())
}

/// Validates the settings, lists up to `max_docs` documents and fetches a few texts.
fn dry_run(
    plugin: &Plugin,
    values: &BTreeMap<String, String>,
    max_docs: usize,
) -> anyhow::Result<String> {
    let grant = Grant::for_settings(plugin.manifest(), values);
    let started = Instant::now();
    plugin
        .validate_config(values, &grant)
        .context("validate-config refused the sample configuration")?;
    let mut out = format!(
        "Settings   accepted by validate-config ({:.0} ms)\n",
        started.elapsed().as_secs_f64() * 1000.0
    );
    let mut session = plugin.session(values, &grant, None)?;
    let mut checkpoint: Option<String> = None;
    let (mut docs, mut batches, mut deletes, mut with_text, mut bytes) =
        (Vec::new(), 0, 0, 0, 0u64);
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut coverages = std::collections::BTreeSet::new();
    let listing = Instant::now();
    loop {
        let batch = session
            .list_docs(checkpoint.as_deref())
            .with_context(|| format!("list-docs failed on batch {}", batches + 1))?;
        batches += 1;
        deletes += batch.deletes.len();
        coverages.insert(format!("{:?}", batch.coverage).to_lowercase());
        for doc in batch.upserts {
            with_text += usize::from(doc.has_text);
            bytes += doc.meta.size_bytes;
            *kinds.entry(doc.meta.mime_type.clone()).or_default() += 1;
            docs.push(doc);
        }
        if !batch.more || docs.len() >= max_docs {
            break;
        }
        checkpoint = Some(batch.checkpoint);
    }
    let more = if docs.len() >= max_docs {
        " (stopped at --max-docs; more follow)"
    } else {
        ""
    };
    out.push_str(&format!(
        "Listing    {} documents in {batches} batch(es), {:.0} ms, coverage {}{more}; {deletes} deletions\n",
        docs.len(),
        listing.elapsed().as_secs_f64() * 1000.0,
        coverages.into_iter().collect::<Vec<_>>().join(" and "),
    ));
    out.push_str(&format!(
        "           {with_text} with text, {bytes} bytes in all; types: {}\n",
        kinds
            .iter()
            .map(|(kind, n)| format!("{kind} ({n})"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for doc in docs.iter().take(5) {
        out.push_str(&format!(
            "           - {} [{}]{}\n",
            doc.meta.title,
            doc.id.as_str(),
            doc.meta
                .path
                .as_deref()
                .map(|p| format!(" {p}"))
                .unwrap_or_default()
        ));
    }
    // Asked for as a sync asks: small documents several at a time (`fetch-contents`).
    let tried: Vec<_> = docs
        .iter()
        .filter(|d| d.has_text)
        .take(TEXTS_TRIED)
        .collect();
    let wanted: Vec<ToFetch<'_>> = tried.iter().map(|doc| ToFetch::from(*doc)).collect();
    let texts = session.fetch_all(&wanted);
    for (doc, text) in tried.into_iter().zip(texts) {
        let text = text.with_context(|| format!("no text for {:?}", doc.meta.title))?;
        let preview: String = text.text.chars().take(120).collect();
        out.push_str(&format!(
            "Text       {:?}: {} characters, {} pages: {:?}\n",
            doc.meta.title,
            text.text.chars().count(),
            text.page_starts.len(),
            preview.replace('\n', " ")
        ));
    }
    let usage = session.usage();
    out.push_str(&format!(
        "Cost       {} calls ({} failed), {:.1} ms CPU, peak memory {:.1} MiB\n",
        usage.calls,
        usage.failed_calls,
        usage.cpu.as_secs_f64() * 1000.0,
        usage.peak_memory_bytes as f64 / 1_048_576.0
    ));
    out.push_str("Ready      `quarry plugin install` it, then `quarry connector add plugin ...`\n");
    Ok(out)
}

/// Imports by package (`wasi:io@0.2.9`, `quarry:connector@0.1.0`), each once, with the
/// interfaces of each: `wasi:io@0.2.9 (poll, error, streams)`.
fn packages(imports: &[String]) -> String {
    let mut by_package: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for import in imports {
        let (path, version) = import.split_once('@').unwrap_or((import, ""));
        let (package, interface) = path.split_once('/').unwrap_or((path, ""));
        by_package
            .entry(format!("{package}@{version}"))
            .or_default()
            .push(interface);
    }
    by_package
        .iter()
        .map(|(package, interfaces)| format!("{package} ({})", interfaces.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}
