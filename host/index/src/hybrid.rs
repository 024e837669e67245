//! Semantic and hybrid ranking: the query's vector against every allowed document's passages
//! (exact, filters first), fused with the keyword ranking by weighted reciprocal rank fusion.
//! A document whose vectors are still pending takes its keyword rank in the semantic ranking
//! too, so it is neither lost nor pushed down while the background queue catches up.

use std::collections::HashMap;

use tantivy::query::EnableScoring;
use tantivy::{DocAddress, Searcher};

use crate::IndexError;
use crate::keyword::{self, Compiled, Page, Ranked};
use crate::request::{Fusion, SearchRequest, SemanticQuery, SortBy, SortOrder};
use crate::schema::Fields;
use crate::vectors::{Best, QueryVector, VectorCache, scan};

/// Candidates taken from each ranking at least (more when the page asked for lies deeper).
pub const POOL: usize = 100;

/// A candidate: its ranks in the two rankings (0-based) and its best passage.
#[derive(Default, Clone, Copy)]
struct Candidate {
    keyword: Option<usize>,
    semantic: Option<(usize, usize)>,
    /// Its keyword rank, when it has no vectors yet.
    pending_rank: Option<usize>,
    fused: f32,
}

/// The page of the fused ranking that `request` asks for, and how many allowed documents have
/// no vectors yet. Its total is the number of candidates of either ranking; its scores are the
/// fused ones relative to the best possible, in [0, 1].
pub(crate) fn page(
    searcher: &Searcher,
    cache: &VectorCache,
    request: &SearchRequest,
    compiled: &Compiled,
    semantic: &SemanticQuery,
    fusion: Fusion,
) -> Result<(Page, u64), IndexError> {
    let pool = (request.offset + request.limit).max(POOL);
    let (candidates, pending) = candidates(searcher, cache, compiled, semantic, fusion, pool)?;
    let mut ranked: Vec<(DocAddress, Candidate)> = candidates.into_iter().collect();
    match request.sort_by {
        SortBy::Relevance => {
            ranked.sort_by(|a, b| b.1.fused.total_cmp(&a.1.fused).then_with(|| a.0.cmp(&b.0)))
        }
        SortBy::UpdateTime => sort_newest_first(searcher, &mut ranked)?,
    }
    if request.order == SortOrder::Ascending {
        ranked.reverse();
    }
    let total = ranked.len() as u64;
    let best_possible = (fusion.keyword + fusion.semantic) / (fusion.k + 1.0);
    let ranked = ranked
        .into_iter()
        .skip(request.offset)
        .take(request.limit)
        .map(|(address, candidate)| Ranked {
            address,
            score: (candidate.fused / best_possible).clamp(0.0, 1.0),
            passage: candidate.semantic.map(|(_, passage)| passage),
        })
        .collect();
    Ok((Page { ranked, total }, pending))
}

/// The keyword ranking's best and the nearest documents, `pool` of each, with their fused
/// scores; and how many allowed documents have no vectors yet. With vectors pending, the
/// keyword ranking is taken even when its weight is 0, to rank those documents.
fn candidates(
    searcher: &Searcher,
    cache: &VectorCache,
    compiled: &Compiled,
    semantic: &SemanticQuery,
    fusion: Fusion,
    pool: usize,
) -> Result<(HashMap<DocAddress, Candidate>, u64), IndexError> {
    let query = QueryVector::new(&semantic.model, &semantic.vector);
    let (nearest, pending) = nearest(searcher, cache, compiled, &query, pool)?;
    let mut candidates: HashMap<DocAddress, Candidate> = HashMap::new();
    if fusion.keyword > 0.0 || pending > 0 {
        for (rank, address) in keyword::best(searcher, compiled, pool)?
            .into_iter()
            .enumerate()
        {
            let vectors = cache.get(searcher.segment_reader(address.segment_ord), &query)?;
            let candidate = candidates.entry(address).or_default();
            if fusion.keyword > 0.0 {
                candidate.keyword = Some(rank);
            }
            if !vectors.has(address.doc_id) {
                candidate.pending_rank = Some(rank);
            }
        }
    }
    for (rank, (address, best)) in nearest.into_iter().enumerate() {
        candidates.entry(address).or_default().semantic = Some((rank, best.passage));
    }
    candidates
        .retain(|_, c| c.keyword.is_some() || c.semantic.is_some() || c.pending_rank.is_some());
    for c in candidates.values_mut() {
        c.fused = fused(fusion, c);
    }
    Ok((candidates, pending))
}

/// A candidate's reciprocal rank fusion score: each ranking's weight / (k + 1-based rank); a
/// document without vectors yet counts its keyword rank as its semantic one.
fn fused(fusion: Fusion, c: &Candidate) -> f32 {
    let part = |rank: Option<usize>, weight: f32| {
        rank.map_or(0.0, |r| weight / (fusion.k + 1.0 + r as f32))
    };
    let semantic = c.semantic.map(|s| s.0).or(c.pending_rank);
    part(c.keyword, fusion.keyword) + part(semantic, fusion.semantic)
}

/// Sorts candidates newest first (by update time), ties by address.
fn sort_newest_first(
    searcher: &Searcher,
    ranked: &mut [(DocAddress, Candidate)],
) -> Result<(), IndexError> {
    let mut times = HashMap::new();
    for (address, _) in ranked.iter() {
        let column = searcher
            .segment_reader(address.segment_ord)
            .fast_fields()
            .i64(Fields::UPDATED)?;
        times.insert(*address, column.first(address.doc_id).unwrap_or(0));
    }
    ranked.sort_by(|a, b| times[&b.0].cmp(&times[&a.0]).then_with(|| a.0.cmp(&b.0)));
    Ok(())
}

/// The `limit` allowed documents whose best passage is nearest the query, nearest first, and
/// how many allowed documents have no vectors of the query's model.
fn nearest(
    searcher: &Searcher,
    cache: &VectorCache,
    compiled: &Compiled,
    query: &QueryVector,
    limit: usize,
) -> Result<(Vec<(DocAddress, Best)>, u64), IndexError> {
    let weight = compiled
        .allowed
        .weight(EnableScoring::disabled_from_searcher(searcher))?;
    let mut found: Vec<(DocAddress, Best)> = Vec::new();
    let mut missing = 0;
    for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        let vectors = cache.get(segment, query)?;
        let mut docs = weight.scorer(segment, 1.0)?;
        let alive = segment.alive_bitset();
        let segment_ord = u32::try_from(ord).unwrap_or(u32::MAX);
        missing += scan(
            &vectors,
            query,
            docs.as_mut(),
            |doc| alive.is_none_or(|a| a.is_alive(doc)),
            |best| found.push((DocAddress::new(segment_ord, best.doc), best)),
        );
    }
    cache.retain(
        &searcher
            .segment_readers()
            .iter()
            .map(|s| s.segment_id())
            .collect::<Vec<_>>(),
    );
    let by_similarity = |a: &(DocAddress, Best), b: &(DocAddress, Best)| {
        b.1.similarity
            .total_cmp(&a.1.similarity)
            .then_with(|| a.0.cmp(&b.0))
    };
    if found.len() > limit {
        found.select_nth_unstable_by(limit, by_similarity);
        found.truncate(limit);
    }
    found.sort_by(by_similarity);
    Ok((found, missing))
}
