//! Helpers for the runtime's tests against the real, built plugin components.

#![allow(dead_code)] // each test file uses its own subset

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use quarry_core::{ExtractedText, SourceDoc};
use quarry_runtime::{
    Grant, Limits, Plugin, Runtime, RuntimeConfig, RuntimeError, Session, ToFetch,
};

/// A runtime with the shared component cache.
pub fn runtime() -> Runtime {
    Runtime::new(RuntimeConfig {
        cache_dir: Some(quarry_tests::component_cache()),
        ..RuntimeConfig::default()
    })
    .expect("runtime starts")
}

/// Loads a built plugin by id.
pub fn load(runtime: &Runtime, id: &str, limits: Limits) -> Plugin {
    runtime
        .load(&quarry_tests::plugin_dir(id), limits)
        .unwrap_or_else(|e| panic!("plugin {id} loads: {e}"))
}

/// Settings from pairs, and the grant that approves every folder among them.
pub fn settings(plugin: &Plugin, pairs: &[(&str, &str)]) -> (BTreeMap<String, String>, Grant) {
    let values: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let grant = Grant::for_settings(plugin.manifest(), &values);
    (values, grant)
}

/// A session of the folder plugin over `dir`.
pub fn folder_session(plugin: &Plugin, dir: &Path) -> Session {
    let path = dir.to_string_lossy().into_owned();
    let (values, grant) = settings(plugin, &[("folder", &path)]);
    plugin
        .session(&values, &grant, None)
        .expect("session opens")
}

/// Lists everything, following checkpoints until the listing ends. Returns the documents and
/// the number of batches.
pub fn list_all(session: &mut Session) -> Result<(Vec<SourceDoc>, usize), RuntimeError> {
    let mut docs = Vec::new();
    let mut checkpoint: Option<String> = None;
    let mut batches = 0;
    loop {
        let batch = session.list_docs(checkpoint.as_deref())?;
        batches += 1;
        docs.extend(batch.upserts);
        if !batch.more {
            return Ok((docs, batches));
        }
        checkpoint = Some(batch.checkpoint);
    }
}

/// Fetches the text of a listed document.
pub fn text_of(session: &mut Session, doc: &SourceDoc) -> ExtractedText {
    session
        .fetch_content(&doc.id, &doc.locator)
        .unwrap_or_else(|e| panic!("{} extracts: {e}", doc.locator))
}

/// Limits with a short deadline, so tests of stopped calls stay quick.
pub fn quick_limits() -> Limits {
    Limits {
        call_timeout: Duration::from_secs(2),
        ..Limits::default()
    }
}

/// The texts of `docs`, asked for as a sync asks (small ones several at a time).
pub fn fetch_all(
    session: &mut Session,
    docs: &[SourceDoc],
) -> Vec<Result<ExtractedText, RuntimeError>> {
    let wanted: Vec<ToFetch<'_>> = docs.iter().map(ToFetch::from).collect();
    session.fetch_all(&wanted)
}
