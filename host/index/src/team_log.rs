//! A team host's index is a copy of the team's: every write goes to the team's log (a table of
//! the team database, one row per document, each change numbered in commit order) and comes
//! back from it, applied by the host's follower in that order. So every host searches every
//! document, with the embedded index's ranking, and a host that was away catches up from the
//! position its index last committed.
//!
//! This module is the index's side: the log itself as a trait ([`TeamLog`], kept by the store;
//! its changes and entries are `quarry_core::team_log`'s), where an index stands in it
//! ([`Applied`]), and a document's record, the bytes the log keeps of it ([`encode`],
//! [`decode`]).

use quarry_core::team_log::LogChange;
use quarry_core::{ConnectorId, DocId, DocMeta};
use serde::{Deserialize, Serialize};

use crate::IndexError;
use crate::document::{DocInfo, IndexDoc};
use crate::vectors::Embedding;

/// The team's log of documents, as the store keeps it.
pub trait TeamLog: Send + Sync {
    /// Appends `changes` in one transaction and returns the position of the last change it
    /// made (0 when it made none: every conditional change found its document changed since).
    fn append(&self, changes: Vec<LogChange>) -> Result<u64, IndexError>;
}

/// What the index records of the team's log in its commits: which team database, and the
/// position of the last change applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The team database's id.
    pub team: String,
    /// The position of the last change the index holds.
    pub position: u64,
}

impl Applied {
    const PREFIX: &'static str = "team ";

    /// As kept in a commit's payload.
    pub(crate) fn payload(&self) -> String {
        format!("{}{} {}", Applied::PREFIX, self.team, self.position)
    }

    /// Read from a commit's payload; `None` for an index that never followed a team.
    pub(crate) fn parse(payload: &str) -> Option<Applied> {
        let (team, position) = payload.strip_prefix(Applied::PREFIX)?.rsplit_once(' ')?;
        Some(Applied {
            team: team.to_owned(),
            position: position.parse().ok()?,
        })
    }
}

/// What a record holds besides the text and the vectors.
#[derive(Serialize, Deserialize)]
struct Header {
    connector: String,
    doc: String,
    title: String,
    path: Option<String>,
    url: Option<String>,
    mime: String,
    size: u64,
    updated: i64,
    pages: Vec<u32>,
    metadata: Vec<(String, String)>,
    text_bytes: usize,
    embedding: Option<EmbeddingHeader>,
}

#[derive(Serialize, Deserialize)]
struct EmbeddingHeader {
    model: String,
    passages: Vec<(u32, u32)>,
    complete: bool,
}

/// The bytes the team's log keeps of `doc`: the length of a JSON header (4 bytes, little
/// endian), the header, the text, and the vectors as the index encodes them.
pub fn encode(doc: &IndexDoc) -> Vec<u8> {
    let meta = &doc.info.meta;
    let header = Header {
        connector: doc.info.connector.as_str().to_owned(),
        doc: doc.info.doc_id.as_str().to_owned(),
        title: meta.title.clone(),
        path: meta.path.clone(),
        url: meta.url.clone(),
        mime: meta.mime_type.clone(),
        size: meta.size_bytes,
        updated: meta.update_time_ms,
        pages: doc.page_starts.clone(),
        metadata: doc.metadata.clone(),
        text_bytes: doc.text.len(),
        embedding: doc.embedding.as_ref().map(|e| EmbeddingHeader {
            model: e.model.clone(),
            passages: e.passages.clone(),
            complete: e.is_complete(),
        }),
    };
    let header = serde_json::to_vec(&header).unwrap_or_default();
    let vectors = doc
        .embedding
        .as_ref()
        .filter(|e| !e.is_empty())
        .map(Embedding::encode);
    let mut out = Vec::with_capacity(
        4 + header.len() + doc.text.len() + vectors.as_ref().map_or(0, Vec::len),
    );
    out.extend(
        u32::try_from(header.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    out.extend(header);
    out.extend(doc.text.as_bytes());
    out.extend(vectors.unwrap_or_default());
    out
}

/// A document from its record ([`encode`]); [`IndexError::Damaged`] when the bytes are not one.
pub fn decode(record: &[u8]) -> Result<IndexDoc, IndexError> {
    let damaged = |what: &str| IndexError::Damaged(format!("a record of the team's log {what}"));
    let (length, rest) = record
        .split_first_chunk::<4>()
        .ok_or_else(|| damaged("is too short"))?;
    let length = usize::try_from(u32::from_le_bytes(*length)).unwrap_or(usize::MAX);
    let (header, rest) = rest
        .split_at_checked(length)
        .ok_or_else(|| damaged("has a header longer than itself"))?;
    let header: Header =
        serde_json::from_slice(header).map_err(|e| damaged(&format!("has a bad header: {e}")))?;
    let (text, vectors) = rest
        .split_at_checked(header.text_bytes)
        .ok_or_else(|| damaged("has a text longer than itself"))?;
    let text = String::from_utf8(text.to_vec()).map_err(|_| damaged("has a text not in UTF-8"))?;
    let embedding = match header.embedding {
        None => None,
        Some(e) => {
            // A model that found no passage to embed leaves no vectors, only its name.
            let decoded = match vectors.is_empty() {
                true => Some(Embedding::new(&e.model, e.passages, &[])),
                false => Embedding::decode(&e.model, e.passages, vectors),
            }
            .ok_or_else(|| damaged("has vectors that do not match its passages"))?;
            Some(match e.complete {
                true => decoded.completed(),
                false => decoded.unfinished(),
            })
        }
    };
    Ok(IndexDoc {
        info: DocInfo {
            connector: ConnectorId::parse(header.connector)
                .map_err(|e| damaged(&format!("names a bad connector: {e}")))?,
            doc_id: DocId::parse(header.doc)
                .map_err(|e| damaged(&format!("names a bad document: {e}")))?,
            meta: DocMeta {
                title: header.title,
                path: header.path,
                url: header.url,
                mime_type: header.mime,
                size_bytes: header.size,
                update_time_ms: header.updated,
            },
        },
        text,
        page_starts: header.pages,
        metadata: header.metadata,
        embedding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(embedding: Option<Embedding>) -> IndexDoc {
        IndexDoc {
            info: DocInfo {
                connector: ConnectorId::parse("cn_a").expect("id"),
                doc_id: DocId::parse("f_notes-uni").expect("id"),
                meta: DocMeta {
                    title: "ünï.md".into(),
                    path: Some("notes/ünï.md".into()),
                    url: None,
                    mime_type: "text/markdown".into(),
                    size_bytes: 42,
                    update_time_ms: -5,
                },
            },
            text: "première page\u{c}second page".into(),
            page_starts: vec![0, 14],
            metadata: vec![("author".into(), "Zoë".into())],
            embedding,
        }
    }

    #[test]
    fn a_record_gives_back_the_document_with_its_vectors_and_whether_they_are_all_there() {
        let vectors = vec![vec![0.5, -0.25, 1.0], vec![0.0, 1.0, -1.0]];
        let complete = Embedding::new("model-a", vec![(0, 13), (14, 25)], &vectors);
        let unfinished = Embedding::new("model-a", vec![(0, 13)], &vectors[..1]).unfinished();
        let empty = Embedding::new("model-a", Vec::new(), &[]);
        for embedding in [None, Some(complete), Some(unfinished), Some(empty)] {
            let doc = doc(embedding);
            assert_eq!(decode(&encode(&doc)).expect("decodes"), doc);
        }
    }

    #[test]
    fn a_damaged_record_is_an_error_not_a_document() {
        let record = encode(&doc(None));
        for cut in [0, 3, 10, record.len() - 1] {
            assert!(
                matches!(decode(&record[..cut]), Err(IndexError::Damaged(_))),
                "cut at {cut}"
            );
        }
        let mut bad_text = record.clone();
        let last = bad_text.len() - 1;
        bad_text[last] = 0xff;
        assert!(matches!(decode(&bad_text), Err(IndexError::Damaged(_))));
    }

    #[test]
    fn the_applied_position_survives_its_payload() {
        let applied = Applied {
            team: "df_0123".into(),
            position: 9_007,
        };
        assert_eq!(Applied::parse(&applied.payload()), Some(applied));
        assert_eq!(Applied::parse("something else"), None);
    }
}
