//! Running a search: compiling the query, choosing the ranking (keyword, or hybrid over it), and
//! turning the ranked page into hits with snippets.

use quarry_core::page_at;
use tantivy::snippet::SnippetGenerator;
use tantivy::{Searcher, TantivyDocument};

use crate::IndexError;
use crate::document::{DocInfo, IndexDoc, key, part_starts, passages};
use crate::hybrid;
use crate::keyword::{self, Compiled, Ranked, compile};
use crate::query_syntax::parse;
use crate::request::{Ranking, SearchRequest};
use crate::schema::{Fields, query_analyzer};
use crate::snippet::{Highlighter, SNIPPET_CHARS, Snippet, make};
use crate::text_parts::StoredText;
use crate::vectors::VectorCache;

/// One result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Which document, and what describes it.
    pub info: DocInfo,
    /// Relevance in [0, 1): above 0.5 when the document has every query word.
    pub score: f32,
    /// The best fragment of its text.
    pub snippet: Snippet,
    /// The page (1-based) the snippet lies on: where its first highlighted word is, else where
    /// it starts (a semantic passage, or the text's start). `None` for a document without pages.
    pub page: Option<u64>,
}

/// A page of results and the number of all matching documents.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchResults {
    /// The page asked for, in order.
    pub hits: Vec<Hit>,
    /// Every document that matches.
    pub total: u64,
    /// Why a query found nothing by construction (e.g. only exclusions).
    pub warnings: Vec<String>,
}

/// Runs a search: the keyword ranking, or the hybrid one when `request.ranking` asks for it.
pub(crate) fn run(
    searcher: &Searcher,
    fields: &Fields,
    vectors: &VectorCache,
    request: &SearchRequest,
) -> Result<SearchResults, IndexError> {
    let Some(compiled) = compile(
        &parse(&request.query),
        &request.filters,
        fields,
        &mut query_analyzer(),
    ) else {
        return Ok(SearchResults {
            warnings: vec![
                "the query has no words to search for (only exclusions or punctuation)".to_owned(),
            ],
            ..SearchResults::default()
        });
    };
    let (page, pending) = match &request.ranking {
        Ranking::Keyword => (keyword::page(searcher, &compiled, request)?, 0),
        Ranking::Fused(semantic, fusion) => hybrid::page(
            searcher, fields, vectors, request, &compiled, semantic, *fusion,
        )?,
    };
    let warnings = if pending > 0 {
        vec![pending_warning(pending)]
    } else {
        Vec::new()
    };
    Ok(SearchResults {
        hits: hits(searcher, fields, &compiled, page.ranked)?,
        total: page.total,
        warnings,
    })
}

/// What a semantic search says when some documents it searched have no vectors yet.
fn pending_warning(pending: u64) -> String {
    let documents = if pending == 1 {
        "document is"
    } else {
        "documents are"
    };
    format!(
        "{pending} {documents} not searchable by meaning yet (their embeddings are being \
         computed); until then they are ranked by keyword"
    )
}

/// The hits of ranked documents, in their order: each document read back, its score rounded,
/// and a snippet of its best passage (semantic matches) or of its text's first part. Documents
/// that cannot be read back are left out.
fn hits(
    searcher: &Searcher,
    fields: &Fields,
    compiled: &Compiled,
    ranked: Vec<Ranked>,
) -> Result<Vec<Hit>, IndexError> {
    let mut generator = SnippetGenerator::create(searcher, &*compiled.literal, fields.body)?;
    generator.set_max_num_chars(SNIPPET_CHARS);
    let mut highlighter = Highlighter {
        generator: &generator,
        cjk_words: &compiled.cjk_words,
        analyzer: query_analyzer(),
    };
    let mut hits = Vec::with_capacity(ranked.len());
    for ranked in ranked {
        let stored: TantivyDocument = searcher.doc(ranked.address)?;
        let Some(doc) = IndexDoc::from_tantivy(&stored, fields) else {
            continue;
        };
        let passage = ranked
            .passage
            .and_then(|n| passage_text(searcher, fields, &stored, &doc, n));
        let (located, from) = match &passage {
            Some((start, text)) => (make(&mut highlighter, text), *start),
            None => (make(&mut highlighter, &doc.text), 0),
        };
        // Where the snippet lies: its first highlighted word, else its start.
        let at = from + located.found_at.unwrap_or(0);
        hits.push(Hit {
            page: page_at(&doc.page_starts, at),
            info: doc.info,
            score: round_score(ranked.score),
            snippet: located.snippet,
        });
    }
    Ok(hits)
}

/// Passage `n` of a stored document and its byte offset in the text, from the part of the text
/// it lies in (only that part is loaded). `None` when there is no such passage or its part
/// cannot be read: that costs the snippet its passage, not the search.
fn passage_text(
    searcher: &Searcher,
    fields: &Fields,
    stored: &TantivyDocument,
    doc: &IndexDoc,
    n: usize,
) -> Option<(usize, String)> {
    let (start, end) = passages(stored, fields).get(n).copied()?;
    let text = StoredText {
        key: &key(&doc.info.connector, &doc.info.doc_id),
        head: &doc.text,
        starts: &part_starts(stored, fields),
    }
    .range(searcher, fields, start..end)
    .unwrap_or_else(|e| {
        tracing::warn!(doc = %doc.info.doc_id, "passage unreadable: {e}");
        None
    })?;
    Some((start, text))
}

/// A score as hits give it: to four decimals.
fn round_score(score: f32) -> f32 {
    (score * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::round_score;

    #[test]
    fn scores_are_rounded_to_four_decimals() {
        assert_eq!(round_score(0.123_456), 0.1235);
        assert_eq!(round_score(0.0), 0.0);
        assert_eq!(round_score(1.0), 1.0);
    }
}
