//! What the benchmarks share beyond `quarry_tests::bench`: keyword indexing of a set of texts,
//! timed.

use std::time::{Duration, Instant};

use quarry_core::{ConnectorId, DocId, DocMeta};
use quarry_index::{DocInfo, IndexDoc, SearchIndex, WriteBatch};

/// Writes `docs` (each what describes it and its text) to a fresh index in committed batches of
/// 256 documents; the time taken.
pub fn index_all(docs: Vec<(DocMeta, String)>) -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true).expect("index opens");
    let connector = ConnectorId::parse("cn_bench").expect("id");
    let docs: Vec<IndexDoc> = docs
        .into_iter()
        .enumerate()
        .map(|(i, (meta, text))| IndexDoc {
            info: DocInfo {
                connector: connector.clone(),
                doc_id: DocId::parse(format!("d{i}")).expect("id"),
                meta,
            },
            text,
            page_starts: Vec::new(),
            metadata: Vec::new(),
            embedding: None,
        })
        .collect();
    let started = Instant::now();
    let mut docs = docs.into_iter().peekable();
    while docs.peek().is_some() {
        let upserts: Vec<IndexDoc> = docs.by_ref().take(256).collect();
        index
            .write(WriteBatch {
                upserts,
                ..WriteBatch::default()
            })
            .expect("batch commits");
    }
    started.elapsed()
}
