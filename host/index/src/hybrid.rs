//! Semantic and hybrid ranking: the query's vector against every allowed document's passages
//! (exact, filters first), fused with the keyword ranking by weighted reciprocal rank fusion.

use std::cmp::Ordering;
use std::collections::HashMap;

use tantivy::query::EnableScoring;
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, Searcher, TantivyDocument};

use crate::IndexError;
use crate::document::{IndexDoc, key, part_starts, passages};
use crate::keyword::Compiled;
use crate::schema::Fields;
use crate::search::by_relevance;
use crate::search::{Hit, SearchRequest, SearchResults, SemanticQuery, SortBy, SortOrder};
use crate::snippet::{SNIPPET_CHARS, make};
use crate::text_parts::StoredText;
use crate::vectors::{Best, QueryVector, VectorCache, scan};

/// Candidates taken from each ranking at least (more when the page asked for lies deeper).
pub const POOL: usize = 100;
/// How the two rankings are weighed: reciprocal rank fusion, where a document at (1-based) rank
/// r of a ranking gets that ranking's weight / (k + r).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// The constant k: larger values flatten the difference between top ranks.
    pub k: f32,
    /// Weight of the keyword ranking.
    pub keyword: f32,
    /// Weight of the semantic ranking.
    pub semantic: f32,
}

impl Fusion {
    /// What `semantic_search: true` uses: the usual k of 60, and the keyword ranking weighed a
    /// little below the semantic one. Chosen on the four collections of `make eval` among a
    /// small grid (k 10-100, keyword weight 0.6-1): the one setting of k = 60 under which hybrid
    /// beats both rankings alone on all four.
    pub const HYBRID: Fusion = Fusion {
        k: 60.0,
        keyword: 0.8,
        semantic: 1.0,
    };
    /// The semantic ranking alone (for measuring it; the API always fuses).
    pub const SEMANTIC_ONLY: Fusion = Fusion {
        k: 60.0,
        keyword: 0.0,
        semantic: 1.0,
    };
}

/// A candidate: its ranks in the two rankings (0-based) and its best passage.
#[derive(Default, Clone, Copy)]
struct Candidate {
    keyword: Option<usize>,
    semantic: Option<(usize, usize)>,
    fused: f32,
}

pub(crate) fn run(
    searcher: &Searcher,
    fields: &Fields,
    cache: &VectorCache,
    request: &SearchRequest,
    compiled: &Compiled,
    semantic: &SemanticQuery,
    fusion: Fusion,
) -> Result<SearchResults, IndexError> {
    let pool = (request.offset + request.limit).max(POOL);
    let mut candidates: HashMap<DocAddress, Candidate> = HashMap::new();
    if fusion.keyword > 0.0 {
        let total = searcher.search(&*compiled.any, &tantivy::collector::Count)?;
        let ranked = by_relevance(searcher, compiled, total, 0, pool, SortOrder::Descending)?;
        for (rank, (address, _)) in ranked.into_iter().enumerate() {
            candidates.entry(address).or_default().keyword = Some(rank);
        }
    }
    let query = QueryVector::new(&semantic.model, &semantic.vector);
    for (rank, (address, best)) in nearest(searcher, cache, compiled, &query, pool)?
        .into_iter()
        .enumerate()
    {
        candidates.entry(address).or_default().semantic = Some((rank, best.passage));
    }
    for c in candidates.values_mut() {
        let part = |rank: Option<usize>, weight: f32| {
            rank.map_or(0.0, |r| weight / (fusion.k + 1.0 + r as f32))
        };
        c.fused = part(c.keyword, fusion.keyword) + part(c.semantic.map(|s| s.0), fusion.semantic);
    }
    let best_possible = (fusion.keyword + fusion.semantic) / (fusion.k + 1.0);
    let mut ranked: Vec<(DocAddress, Candidate)> = candidates.into_iter().collect();
    match request.sort_by {
        SortBy::Relevance => {
            ranked.sort_by(|a, b| b.1.fused.total_cmp(&a.1.fused).then_with(|| a.0.cmp(&b.0)))
        }
        SortBy::UpdateTime => {
            let mut times = HashMap::new();
            for (address, _) in &ranked {
                let column = searcher
                    .segment_reader(address.segment_ord)
                    .fast_fields()
                    .i64("updated")?;
                times.insert(*address, column.first(address.doc_id).unwrap_or(0));
            }
            ranked.sort_by(|a, b| match times[&b.0].cmp(&times[&a.0]) {
                Ordering::Equal => a.0.cmp(&b.0),
                o => o,
            });
        }
    }
    if request.order == SortOrder::Ascending {
        ranked.reverse();
    }
    let total = ranked.len() as u64;
    let mut generator = SnippetGenerator::create(searcher, &*compiled.literal, fields.body)?;
    generator.set_max_num_chars(SNIPPET_CHARS);
    let mut hits = Vec::new();
    for (address, candidate) in ranked.into_iter().skip(request.offset).take(request.limit) {
        let stored: TantivyDocument = searcher.doc(address)?;
        let Some(doc) = IndexDoc::from_tantivy(&stored, fields) else {
            continue;
        };
        // The best passage, from the part of the text it lies in (only that part is loaded).
        let passage = match candidate
            .semantic
            .and_then(|(_, p)| passages(&stored, fields).get(p).copied())
        {
            Some((start, end)) => StoredText {
                key: &key(&doc.info.connector, &doc.info.doc_id),
                head: &doc.text,
                starts: &part_starts(&stored, fields),
            }
            .range(searcher, fields, start..end)
            // A part that cannot be read costs the snippet its passage, not the search.
            .unwrap_or_else(|e| {
                tracing::warn!(doc = %doc.info.doc_id, "passage unreadable: {e}");
                None
            }),
            None => None,
        };
        let snippet = make(&generator, passage.as_deref().unwrap_or(&doc.text));
        let score = (candidate.fused / best_possible).clamp(0.0, 1.0);
        hits.push(Hit {
            info: doc.info,
            score: (score * 10_000.0).round() / 10_000.0,
            snippet,
        });
    }
    Ok(SearchResults {
        hits,
        total,
        warnings: Vec::new(),
    })
}

/// The `limit` allowed documents whose best passage is nearest the query, nearest first.
fn nearest(
    searcher: &Searcher,
    cache: &VectorCache,
    compiled: &Compiled,
    query: &QueryVector,
    limit: usize,
) -> Result<Vec<(DocAddress, Best)>, IndexError> {
    let weight = compiled
        .allowed
        .weight(EnableScoring::disabled_from_searcher(searcher))?;
    let mut found: Vec<(DocAddress, Best)> = Vec::new();
    for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        let vectors = cache.get(segment, query)?;
        let mut docs = weight.scorer(segment, 1.0)?;
        let alive = segment.alive_bitset();
        let segment_ord = u32::try_from(ord).unwrap_or(u32::MAX);
        scan(
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
    Ok(found)
}
