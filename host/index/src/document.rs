//! Documents as they go into the index and come back out.

use quarry_core::{ConnectorId, DocId, DocMeta};
use tantivy::TantivyDocument;
use tantivy::schema::Value;

use crate::schema::Fields;
use crate::vectors::Embedding;

/// Which document, and what describes it (without its text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocInfo {
    /// The connector it belongs to.
    pub connector: ConnectorId,
    /// Its id within the connector.
    pub doc_id: DocId,
    /// Title, path, link, type, size, time.
    pub meta: DocMeta,
}

/// A document to index: its metadata and its extracted text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDoc {
    /// What describes it.
    pub info: DocInfo,
    /// Extracted text (empty for metadata-only documents).
    pub text: String,
    /// Byte offsets into `text` where pages start; empty when it has no pages.
    pub page_starts: Vec<u32>,
    /// Connector metadata.
    pub metadata: Vec<(String, String)>,
    /// Its passages' vectors; `None` when no model was loaded. Written, never read back.
    pub embedding: Option<Embedding>,
}

impl IndexDoc {
    pub(crate) fn to_tantivy(&self, f: &Fields) -> TantivyDocument {
        let (info, meta) = (&self.info, &self.info.meta);
        let mut doc = TantivyDocument::new();
        doc.add_text(f.key, key(&info.connector, &info.doc_id));
        doc.add_text(f.connector, info.connector.as_str());
        doc.add_text(f.doc_id, info.doc_id.as_str());
        doc.add_text(f.title, &meta.title);
        if let Some(path) = &meta.path {
            doc.add_text(f.path, path);
        }
        if let Some(url) = &meta.url {
            doc.add_text(f.url, url);
        }
        doc.add_text(f.body, &self.text);
        doc.add_text(f.stems, &meta.title);
        doc.add_text(f.stems, &self.text);
        doc.add_text(f.ext, meta.extension());
        doc.add_text(f.mime, &meta.mime_type);
        doc.add_u64(f.size, meta.size_bytes);
        doc.add_i64(f.updated, meta.update_time_ms);
        let pages: Vec<u8> = self
            .page_starts
            .iter()
            .flat_map(|p| p.to_le_bytes())
            .collect();
        doc.add_bytes(f.pages, &pages);
        let meta: serde_json::Map<String, serde_json::Value> = self
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        doc.add_text(f.meta, serde_json::Value::Object(meta).to_string());
        if let Some(embedding) = self.embedding.as_ref().filter(|e| !e.is_empty()) {
            doc.add_bytes(f.vectors, &embedding.encode());
            let ranges: Vec<u8> = embedding
                .passages
                .iter()
                .flat_map(|&(s, e)| [s.to_le_bytes(), e.to_le_bytes()])
                .flatten()
                .collect();
            doc.add_bytes(f.passages, &ranges);
            doc.add_text(f.model, &embedding.model);
        }
        doc
    }

    pub(crate) fn from_tantivy(doc: &TantivyDocument, f: &Fields) -> Option<IndexDoc> {
        let text = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_str().map(str::to_owned))
        };
        let metadata = text(f.meta)
            .and_then(|m| {
                serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&m).ok()
            })
            .map(|m| {
                m.into_iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k, v.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        let page_starts = doc
            .get_first(f.pages)
            .and_then(|v| v.as_bytes())
            .map(|b| {
                b.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            })
            .unwrap_or_default();
        Some(IndexDoc {
            info: DocInfo {
                connector: ConnectorId::parse(text(f.connector)?).ok()?,
                doc_id: DocId::parse(text(f.doc_id)?).ok()?,
                meta: DocMeta {
                    title: text(f.title).unwrap_or_default(),
                    path: text(f.path),
                    url: text(f.url),
                    mime_type: text(f.mime).unwrap_or_default(),
                    size_bytes: doc.get_first(f.size).and_then(|v| v.as_u64()).unwrap_or(0),
                    update_time_ms: doc
                        .get_first(f.updated)
                        .and_then(|v| v.as_i64())
                        .unwrap_or(0),
                },
            },
            text: text(f.body).unwrap_or_default(),
            page_starts,
            metadata,
            embedding: None,
        })
    }
}

/// The index key of a document: ids cannot hold `/`, so this is unambiguous.
pub(crate) fn key(connector: &ConnectorId, doc: &DocId) -> String {
    format!("{connector}/{doc}")
}

/// The byte ranges of a stored document's passages.
pub(crate) fn passages(doc: &TantivyDocument, f: &Fields) -> Vec<(usize, usize)> {
    doc.get_first(f.passages)
        .and_then(|v| v.as_bytes())
        .map(|b| {
            b.chunks_exact(8)
                .map(|c| {
                    let start = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    let end = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
                    (start as usize, end as usize)
                })
                .collect()
        })
        .unwrap_or_default()
}
