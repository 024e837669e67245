//! What the index's tests share.

use quarry_core::{ConnectorId, DocId, DocMeta};
use quarry_index::{DocInfo, IndexDoc};

/// A plain-text document `id` of `connector` at `path` (its title the file name), updated at
/// `updated_ms`; no pages, metadata or vectors.
pub fn text_doc(connector: &str, id: &str, path: &str, text: &str, updated_ms: i64) -> IndexDoc {
    IndexDoc {
        info: DocInfo {
            connector: ConnectorId::parse(connector).expect("valid connector id"),
            doc_id: DocId::parse(id).expect("valid doc id"),
            meta: DocMeta {
                title: path.rsplit('/').next().unwrap_or(path).to_owned(),
                path: Some(path.to_owned()),
                url: None,
                mime_type: "text/plain".to_owned(),
                size_bytes: text.len() as u64,
                update_time_ms: updated_ms,
            },
        },
        text: text.to_owned(),
        page_starts: vec![],
        metadata: vec![],
        embedding: None,
    }
}
