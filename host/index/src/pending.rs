//! Documents waiting for their passage vectors. A sync writes documents without vectors, so
//! they are searchable by keyword at once; a background queue (`quarry_sync::EmbeddingQueue`)
//! takes the documents that lack vectors of the loaded model from here, newest first, embeds
//! them and gives them back. The index itself is the queue (what lacks vectors is pending), so
//! a crash loses nothing and a restart resumes where it stopped.

use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{Order, Searcher, TantivyDocument, Term};

use quarry_core::{ConnectorId, DocId};

use crate::IndexError;
use crate::document::{IndexDoc, documents, key, part_starts};
use crate::schema::Fields;
use crate::text_parts::StoredText;

/// A document read whole for embedding, and which version of it that was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The document; set its `embedding` and hand it back ([`crate::SearchIndex::add_vectors`]).
    pub doc: IndexDoc,
    /// The revision it was read at: its vectors are stored only over that revision.
    pub(crate) revision: u64,
}

/// Documents without vectors of `model`, optionally of one connector only.
pub(crate) fn without_vectors(f: &Fields, model: &str, connector: Option<&str>) -> Box<dyn Query> {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![
        (Occur::Must, documents()),
        (Occur::MustNot, term(f.model, model)),
    ];
    if let Some(connector) = connector {
        clauses.push((Occur::Must, term(f.connector, connector)));
    }
    Box::new(BooleanQuery::new(clauses))
}

fn term(field: tantivy::schema::Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(
        Term::from_field_text(field, text),
        IndexRecordOption::Basic,
    ))
}

/// Up to `max_docs` documents without vectors of `model`, newest first, read whole; no more
/// once their texts hold `max_bytes` (always at least one).
pub(crate) fn take(
    searcher: &Searcher,
    f: &Fields,
    model: &str,
    max_docs: usize,
    max_bytes: usize,
) -> Result<Vec<Pending>, IndexError> {
    let query = without_vectors(f, model, None);
    let found = searcher.search(
        &*query,
        &TopDocs::with_limit(max_docs.max(1))
            .order_by_fast_field::<i64>(Fields::UPDATED, Order::Desc),
    )?;
    let mut out = Vec::with_capacity(found.len());
    let mut bytes = 0usize;
    for (_, address) in found {
        if !out.is_empty() && bytes >= max_bytes {
            break;
        }
        if let Some(pending) = read_whole(searcher, f, address)? {
            bytes += pending.doc.text.len();
            out.push(pending);
        }
    }
    Ok(out)
}

/// The document of `connector` keyed `doc`, read whole, with its revision.
pub(crate) fn one(
    searcher: &Searcher,
    f: &Fields,
    connector: &ConnectorId,
    doc: &DocId,
) -> Result<Option<Pending>, IndexError> {
    let key = key(connector, doc);
    let query = TermQuery::new(Term::from_field_text(f.key, &key), IndexRecordOption::Basic);
    let found = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
    let Some(&(_, address)) = found.first() else {
        return Ok(None);
    };
    read_whole(searcher, f, address)
}

/// The document at `address`, read whole, with its revision.
fn read_whole(
    searcher: &Searcher,
    f: &Fields,
    address: tantivy::DocAddress,
) -> Result<Option<Pending>, IndexError> {
    let stored: TantivyDocument = searcher.doc(address)?;
    let Some(mut doc) = IndexDoc::from_tantivy(&stored, f) else {
        return Ok(None);
    };
    let key = key(&doc.info.connector, &doc.info.doc_id);
    doc.text = StoredText {
        key: &key,
        head: &doc.text,
        starts: &part_starts(&stored, f),
    }
    .whole(searcher, f)?;
    let revision = searcher
        .segment_reader(address.segment_ord)
        .fast_fields()
        .u64(Fields::REVISION)?
        .first(address.doc_id)
        .unwrap_or(0);
    Ok(Some(Pending { doc, revision }))
}

/// How many documents lack vectors of `model` (of `connector`, or of all).
pub(crate) fn count(
    searcher: &Searcher,
    f: &Fields,
    model: &str,
    connector: Option<&str>,
) -> Result<u64, IndexError> {
    Ok(searcher.search(&*without_vectors(f, model, connector), &Count)? as u64)
}

/// The revision of the document keyed `key` as the searcher sees it; `None` when it has none.
pub(crate) fn current_revision(
    searcher: &Searcher,
    f: &Fields,
    key: &str,
) -> tantivy::Result<Option<u64>> {
    let query = TermQuery::new(Term::from_field_text(f.key, key), IndexRecordOption::Basic);
    let found = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
    let Some((_, address)) = found.first() else {
        return Ok(None);
    };
    Ok(searcher
        .segment_reader(address.segment_ord)
        .fast_fields()
        .u64(Fields::REVISION)?
        .first(address.doc_id))
}
