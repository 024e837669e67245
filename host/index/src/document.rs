//! Documents as they go into the index and come back out.

use quarry_core::{ConnectorId, DocId, DocMeta};
use tantivy::TantivyDocument;
use tantivy::query::{ExistsQuery, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};

use crate::schema::Fields;
use crate::text_parts;
use crate::vectors::Embedding;

/// A query of every document, not the parts of long texts (only documents have a connector).
pub(crate) fn documents() -> Box<dyn Query> {
    Box::new(ExistsQuery::new(Fields::CONNECTOR.to_owned(), false))
}

/// The documents (or parts) whose `field` holds the term `text`.
pub(crate) fn term(field: tantivy::schema::Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(
        tantivy::Term::from_field_text(field, text),
        IndexRecordOption::Basic,
    ))
}

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
    /// Extracted text (empty for metadata-only documents). Read back from the index by a search
    /// it is the first part only (`text_parts`); [`crate::SearchIndex::document`] gives it whole.
    pub text: String,
    /// Byte offsets into `text` where pages start; empty when it has no pages.
    pub page_starts: Vec<u32>,
    /// Connector metadata.
    pub metadata: Vec<(String, String)>,
    /// Its passages' vectors; `None` until the embedding queue computes them. Written, and read
    /// back only by the queue, for a document whose first passages alone have them.
    pub embedding: Option<Embedding>,
}

impl IndexDoc {
    /// The document as tantivy stores it, as its `revision`, followed by the part documents of
    /// a long text.
    pub(crate) fn to_tantivy(&self, f: &Fields, revision: u64) -> Vec<TantivyDocument> {
        let (info, meta) = (&self.info, &self.info.meta);
        let key = key(&info.connector, &info.doc_id);
        let starts = text_parts::split(&self.text);
        let mut doc = TantivyDocument::new();
        doc.add_text(f.key, &key);
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
        doc.add_text(
            f.text,
            &self.text[..starts.first().copied().unwrap_or(self.text.len())],
        );
        let part_starts: Vec<u8> = starts
            .iter()
            .flat_map(|&s| u32::try_from(s).unwrap_or(u32::MAX).to_le_bytes())
            .collect();
        doc.add_bytes(f.parts, &part_starts);
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
        doc.add_u64(f.revision, revision);
        if let Some(embedding) = &self.embedding {
            add_embedding(&mut doc, embedding, f);
        }
        let mut docs = vec![doc];
        docs.extend(self.part_documents(&key, &starts, f));
        docs
    }

    /// The part documents holding the text after its first part, which starts at `starts`.
    fn part_documents(&self, key: &str, starts: &[usize], f: &Fields) -> Vec<TantivyDocument> {
        let ends = starts.iter().skip(1).copied().chain([self.text.len()]);
        starts
            .iter()
            .copied()
            .zip(ends)
            .enumerate()
            .map(|(n, (start, end))| {
                let mut part = TantivyDocument::new();
                part.add_text(f.part_key, text_parts::part_key(key, n + 1));
                part.add_text(f.part_of, key);
                part.add_text(f.part_connector, self.info.connector.as_str());
                part.add_text(f.text, &self.text[start..end]);
                part
            })
            .collect()
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
        let page_starts = u32_list(doc, f.pages);
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
            text: text(f.text).unwrap_or_default(),
            page_starts,
            metadata,
            embedding: None,
        })
    }
}

/// Adds a document's passage vectors, their byte ranges and the model that made them (the
/// model even when there is no vector, so the document is not taken for embedding again; marked
/// unfinished while only its first passages have vectors).
fn add_embedding(doc: &mut TantivyDocument, embedding: &Embedding, f: &Fields) {
    doc.add_text(f.model, embedding.model_term());
    if embedding.is_empty() {
        return;
    }
    doc.add_bytes(f.vectors, &embedding.encode());
    let ranges: Vec<u8> = embedding
        .passages
        .iter()
        .flat_map(|&(s, e)| [s.to_le_bytes(), e.to_le_bytes()])
        .flatten()
        .collect();
    doc.add_bytes(f.passages, &ranges);
}

/// The index key of a document: ids cannot hold `/`, so this is unambiguous.
pub(crate) fn key(connector: &ConnectorId, doc: &DocId) -> String {
    format!("{connector}/{doc}")
}

/// Where the later parts of a stored document's text start (none for a text of one part).
pub(crate) fn part_starts(doc: &TantivyDocument, f: &Fields) -> Vec<u32> {
    u32_list(doc, f.parts)
}

/// A bytes field holding little-endian u32s, decoded.
fn u32_list(doc: &TantivyDocument, field: tantivy::schema::Field) -> Vec<u32> {
    doc.get_first(field)
        .and_then(|v| v.as_bytes())
        .map(|b| {
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text_parts::PART_BYTES;

    #[test]
    fn a_document_stores_at_most_one_part_of_its_text() {
        let (_, f) = Fields::schema();
        let text = "word ".repeat(3 * PART_BYTES / 5 + 7); // three parts and a bit
        let doc = IndexDoc {
            info: DocInfo {
                connector: ConnectorId::parse("cn_a").expect("id"),
                doc_id: DocId::parse("d").expect("id"),
                meta: DocMeta::default(),
            },
            text: text.clone(),
            page_starts: Vec::new(),
            metadata: Vec::new(),
            embedding: None,
        };
        let stored = doc.to_tantivy(&f, 1);
        assert_eq!(stored.len(), 4, "the document and three parts");
        let texts: Vec<&str> = stored
            .iter()
            .map(|d| {
                d.get_first(f.text)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
            })
            .collect();
        assert!(texts.iter().all(|t| t.len() <= PART_BYTES));
        assert_eq!(texts.concat(), text);
        assert_eq!(part_starts(&stored[0], &f).len(), 3);
    }
}
