//! `quarry scan`: the folder plugin over one folder, printing what it lists and extracts.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Context;
use quarry_runtime::{Grant, Limits, Runtime, RuntimeConfig};
use serde_json::json;

use crate::cli::{PluginOptions, ScanArgs};

/// Runs the scan and prints one line (or JSON object) per document, then a summary.
pub fn run(plugins: &PluginOptions, args: &ScanArgs) -> anyhow::Result<()> {
    let root = args
        .path
        .canonicalize()
        .with_context(|| format!("cannot open {}", args.path.display()))?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(plugins.cache_dir()),
        ..RuntimeConfig::default()
    })?;
    let plugin = runtime
        .load(&plugins.plugins_dir.join("folder"), Limits::default())
        .with_context(|| "run `make plugins` to build the folder plugin")?;
    let values = BTreeMap::from([("folder".to_owned(), root.to_string_lossy().into_owned())]);
    let grant = Grant::for_directories(plugin.manifest(), &values);
    let mut session = plugin.session(&values, &grant, None)?;

    let started = Instant::now();
    let (mut docs, mut with_text, mut failed, mut bytes) = (0usize, 0usize, 0usize, 0u64);
    let mut checkpoint: Option<String> = None;
    loop {
        let batch = session.list_docs(checkpoint.as_deref())?;
        for doc in &batch.upserts {
            docs += 1;
            bytes += doc.size_bytes;
            let extracted = if doc.has_text {
                match session.fetch_content(&doc.id, &doc.locator) {
                    Ok(text) => Some(Ok(text)),
                    Err(e) => Some(Err(e.to_string())),
                }
            } else {
                None
            };
            let path = doc.path.as_deref().unwrap_or(&doc.locator);
            match &extracted {
                Some(Ok(text)) => {
                    with_text += 1;
                    let pages = text.page_starts.len();
                    let preview: String =
                        text.text.split_whitespace().collect::<Vec<_>>().join(" ");
                    let preview: String = preview.chars().take(60).collect();
                    if args.json {
                        println!(
                            "{}",
                            json!({"doc_id": doc.id.as_str(), "path": path, "mime_type": doc.mime_type,
                                   "size_bytes": doc.size_bytes, "chars": text.text.chars().count(),
                                   "pages": pages, "metadata": BTreeMap::from_iter(text.metadata.iter().cloned())})
                        );
                    } else {
                        let pages = if pages > 0 {
                            format!("{pages} pages")
                        } else {
                            String::new()
                        };
                        println!(
                            "{path:<48} {:>10} chars {pages:>9}  {preview}",
                            text.text.chars().count()
                        );
                    }
                }
                Some(Err(error)) => {
                    failed += 1;
                    if args.json {
                        println!(
                            "{}",
                            json!({"doc_id": doc.id.as_str(), "path": path, "error": error})
                        );
                    } else {
                        println!("{path:<48} FAILED: {error}");
                    }
                }
                None => {
                    if args.json {
                        println!(
                            "{}",
                            json!({"doc_id": doc.id.as_str(), "path": path, "mime_type": doc.mime_type,
                                              "size_bytes": doc.size_bytes, "metadata_only": true})
                        );
                    } else {
                        println!(
                            "{path:<48} {:>10} bytes, metadata only ({})",
                            doc.size_bytes, doc.mime_type
                        );
                    }
                }
            }
        }
        if !batch.more {
            break;
        }
        checkpoint = Some(batch.checkpoint);
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{docs} documents ({with_text} with text, {failed} failed, {} metadata only) in {secs:.2} s, {:.1} MB listed",
        docs - with_text - failed,
        bytes as f64 / 1e6
    );
    Ok(())
}
