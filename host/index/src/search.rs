//! Running keyword searches: ranking tiers, sorting, offset paging, exact totals, snippets.

use std::sync::Arc;

use quarry_core::ConnectorId;
use tantivy::collector::sort_key::SortBySimilarityScore;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, EnableScoring, Occur, Query};
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, DocSet, Order, Searcher, TantivyDocument};

use crate::IndexError;
use crate::document::{DocInfo, IndexDoc};
use crate::hybrid::{self, Fusion};
use crate::keyword::{Compiled, Filters, compile};
use crate::query_syntax::parse;
use crate::schema::{Fields, analyzer};
use crate::snippet::{SNIPPET_CHARS, Snippet, make};
use crate::vectors::VectorCache;

/// What results are ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// Relevance: documents with every query word first, then by BM25.
    Relevance,
    /// Last modification time.
    UpdateTime,
}

/// Which end comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortOrder {
    /// Best or newest first.
    Descending,
    /// Worst or oldest first.
    Ascending,
}

/// The query's embedding, from the model whose vectors it is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct SemanticQuery {
    /// The model's id ([`crate::Embedding::model`] of the documents it can be compared with).
    pub model: String,
    /// The query's unit-length vector.
    pub vector: Arc<Vec<f32>>,
}

/// How results are ranked for relevance.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    /// Keyword only (`semantic_search: false`).
    Keyword,
    /// Semantic and keyword rankings fused with these weights.
    Fused(SemanticQuery, Fusion),
}

/// A search, already validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// The query text (words, "phrases", -exclusions).
    pub query: String,
    /// What results must satisfy.
    pub filters: Filters,
    /// Ordering.
    pub sort_by: SortBy,
    /// Direction.
    pub order: SortOrder,
    /// Results to skip.
    pub offset: usize,
    /// Results to return at most (at least 1).
    pub limit: usize,
    /// Keyword, or fused with semantic.
    pub ranking: Ranking,
}

impl SearchRequest {
    /// A search of `connectors` for `query`: no other filter, best first, the first `limit`.
    pub fn new(
        query: impl Into<String>,
        connectors: Vec<ConnectorId>,
        limit: usize,
    ) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            filters: Filters {
                connectors,
                updated_from_ms: None,
                updated_to_ms: None,
                extensions: None,
            },
            sort_by: SortBy::Relevance,
            order: SortOrder::Descending,
            offset: 0,
            limit,
            ranking: Ranking::Keyword,
        }
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document.
    pub info: DocInfo,
    /// Relevance in [0, 1): above 0.5 when the document has every query word.
    pub score: f32,
    /// The best fragment of its text.
    pub snippet: Snippet,
}

/// A page of results and the number of all matching documents.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchResults {
    /// The page.
    pub hits: Vec<Hit>,
    /// Every document that matches.
    pub total: u64,
    /// Why a query found nothing by construction (e.g. only exclusions).
    pub warnings: Vec<String>,
}

/// BM25 scores are mapped to (0, 1) with s / (s + this).
const SCORE_HALF: f32 = 8.0;

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
        &mut analyzer(),
    ) else {
        return Ok(SearchResults {
            warnings: vec![
                "the query has no words to search for (only exclusions or punctuation)".to_owned(),
            ],
            ..SearchResults::default()
        });
    };
    if let Ranking::Fused(semantic, fusion) = &request.ranking {
        return hybrid::run(
            searcher, fields, vectors, request, &compiled, semantic, *fusion,
        );
    }
    let total = searcher.search(&*compiled.any, &Count)?;
    let limit = request.limit.max(1);
    let ranked: Vec<(DocAddress, f32)> = match request.sort_by {
        SortBy::Relevance => by_relevance(
            searcher,
            &compiled,
            total,
            request.offset,
            limit,
            request.order,
        )?,
        SortBy::UpdateTime => by_time(searcher, &compiled, request.offset, limit, request.order)?,
    };
    let mut generator = SnippetGenerator::create(searcher, &*compiled.literal, fields.body)?;
    generator.set_max_num_chars(SNIPPET_CHARS);
    let mut hits = Vec::with_capacity(ranked.len());
    for (address, score) in ranked {
        let doc: TantivyDocument = searcher.doc(address)?;
        let Some(doc) = IndexDoc::from_tantivy(&doc, fields) else {
            continue;
        };
        hits.push(Hit {
            snippet: make(&generator, &doc.text),
            info: doc.info,
            score,
        });
    }
    Ok(SearchResults {
        hits,
        total: total as u64,
        warnings: Vec::new(),
    })
}

/// The window `[offset, offset + limit)` of the relevance order: documents with every word
/// first (tier 1), then the others (tier 2), each by BM25. Ascending order is the same order
/// reversed, so its window is taken from the other end.
pub(crate) fn by_relevance(
    searcher: &Searcher,
    compiled: &Compiled,
    total: usize,
    offset: usize,
    limit: usize,
    order: SortOrder,
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    let (start, len) = match order {
        SortOrder::Descending => (offset, limit),
        SortOrder::Ascending => {
            let end = total.saturating_sub(offset);
            let start = end.saturating_sub(limit);
            (start, end - start)
        }
    };
    if len == 0 {
        return Ok(Vec::new());
    }
    let mut window = Vec::with_capacity(len);
    match &compiled.all {
        None => window.extend(top(searcher, &*compiled.any, start, len, true)?),
        Some(all) => {
            let tier1 = searcher.search(&**all, &Count)?;
            if start < tier1 {
                window.extend(top(searcher, &**all, start, len.min(tier1 - start), true)?);
            }
            if window.len() < len {
                let rest: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
                    (Occur::Must, compiled.any.box_clone()),
                    (Occur::MustNot, all.box_clone()),
                ]));
                let skip = start.saturating_sub(tier1);
                window.extend(top(searcher, &*rest, skip, len - window.len(), false)?);
            }
        }
    }
    if order == SortOrder::Ascending {
        window.reverse();
    }
    Ok(window)
}

/// Top documents by score, with their scores mapped into their tier's half of [0, 1).
fn top(
    searcher: &Searcher,
    query: &dyn Query,
    offset: usize,
    limit: usize,
    tier1: bool,
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    let docs = searcher.search(
        query,
        &TopDocs::with_limit(limit.max(1))
            .and_offset(offset)
            .order_by((SortBySimilarityScore, Order::Desc)),
    )?;
    Ok(docs
        .into_iter()
        .map(|(score, address)| (address, tiered_score(score, tier1)))
        .collect())
}

/// The window of the update-time order; each hit's relevance is computed for its score.
fn by_time(
    searcher: &Searcher,
    compiled: &Compiled,
    offset: usize,
    limit: usize,
    order: SortOrder,
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    let order = match order {
        SortOrder::Descending => Order::Desc,
        SortOrder::Ascending => Order::Asc,
    };
    let docs: Vec<(Option<i64>, DocAddress)> = searcher.search(
        &*compiled.any,
        &TopDocs::with_limit(limit.max(1))
            .and_offset(offset)
            .order_by_fast_field::<i64>("updated", order),
    )?;
    // Relevance of each hit: its score under `any`, and whether it is in `all` (tier 1). The
    // `all` scorer of a segment is only ever moved forward, as tantivy requires.
    let scoring = EnableScoring::enabled_from_searcher(searcher);
    let any = compiled.any.weight(scoring)?;
    let all = compiled
        .all
        .as_ref()
        .map(|q| q.weight(scoring))
        .transpose()?;
    let mut in_order: Vec<(usize, DocAddress)> = docs
        .iter()
        .map(|(_, address)| *address)
        .enumerate()
        .collect();
    in_order.sort_by_key(|(_, a)| (a.segment_ord, a.doc_id));
    let mut tier1 = vec![all.is_none(); docs.len()];
    if let Some(all) = &all {
        let mut scorer: Option<(u32, Box<dyn tantivy::query::Scorer>)> = None;
        for (position, address) in &in_order {
            if scorer
                .as_ref()
                .is_none_or(|(segment, _)| *segment != address.segment_ord)
            {
                let reader = searcher.segment_reader(address.segment_ord);
                scorer = Some((address.segment_ord, all.scorer(reader, 1.0)?));
            }
            if let Some((_, s)) = scorer.as_mut() {
                let doc = if s.doc() < address.doc_id {
                    s.seek(address.doc_id)
                } else {
                    s.doc()
                };
                tier1[*position] = doc == address.doc_id;
            }
        }
    }
    let mut out = Vec::with_capacity(docs.len());
    for (position, (_, address)) in docs.into_iter().enumerate() {
        let segment = searcher.segment_reader(address.segment_ord);
        let score = any
            .explain(segment, address.doc_id)
            .map_or(0.0, |e| e.value());
        out.push((address, tiered_score(score, tier1[position])));
    }
    Ok(out)
}

/// Maps a BM25 score into [0.5, 1) for tier 1 and [0, 0.5) for tier 2, so that scores never
/// increase down a relevance-ordered list.
fn tiered_score(bm25: f32, tier1: bool) -> f32 {
    let unit = if bm25 > 0.0 {
        bm25 / (bm25 + SCORE_HALF)
    } else {
        0.0
    };
    let score = if tier1 { 0.5 + unit / 2.0 } else { unit / 2.0 };
    (score * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::tiered_score;

    #[test]
    fn tier_one_always_scores_above_tier_two() {
        assert!(tiered_score(0.01, true) >= 0.5);
        assert!(tiered_score(1e9, false) <= 0.5);
        assert!(tiered_score(3.0, true) < tiered_score(4.0, true));
        assert_eq!(tiered_score(0.0, false), 0.0);
    }
}
