//! Semantic and hybrid ranking: the query's vector against every allowed document's passages
//! (exact, filters first), fused with the keyword ranking (by weighted reciprocal ranks, or by
//! scaled scores; [`Fusion`] has the levers).
//! A document whose vectors are still pending takes its keyword rank in the semantic ranking
//! too, so it is neither lost nor pushed down while the background queue catches up.

use std::collections::HashMap;

use tantivy::query::EnableScoring;
use tantivy::{DocAddress, Searcher};

use crate::IndexError;
use crate::keyword::{Compiled, Page, Ranked};
use crate::keyword_side;
use crate::request::{
    Combine, Fusion, Passages, SearchRequest, SemanticQuery, SortBy, SortOrder, VectorFeedback,
};
use crate::schema::Fields;
use crate::vectors::{Best, QueryVector, VectorCache, best_of, passage_vector, scan};

/// Candidates taken from each ranking at least (more when the page asked for lies deeper).
pub const POOL: usize = 100;

/// A candidate: its place in the two rankings (0-based rank and score) and its best passage.
#[derive(Default, Clone, Copy)]
struct Candidate {
    keyword: Option<(usize, f32)>,
    /// Its rank among the nearest.
    semantic: Option<usize>,
    /// Its semantic score: known for the nearest and, when scores are combined, for every
    /// candidate with vectors.
    similarity: Option<f32>,
    /// Its best passage, for the nearest (the snippet's place).
    passage: Option<usize>,
    /// Its place in the keyword ranking, when it has no vectors yet.
    pending: Option<(usize, f32)>,
    fused: f32,
}

/// The page of the fused ranking that `request` asks for, and how many allowed documents have
/// no vectors yet. Its total is the number of candidates of either ranking; its scores are the
/// fused ones relative to the best possible, in [0, 1].
pub(crate) fn page(
    searcher: &Searcher,
    fields: &Fields,
    cache: &VectorCache,
    request: &SearchRequest,
    compiled: &Compiled,
    semantic: &SemanticQuery,
    fusion: Fusion,
) -> Result<(Page, u64), IndexError> {
    let pool = (request.offset + request.limit).max(POOL);
    let side = Sides {
        searcher,
        fields,
        cache,
        compiled,
        fusion,
        pool,
    };
    let (candidates, pending) = side.candidates(semantic)?;
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
    let best_possible = match fusion.combine {
        Combine::Ranks => (fusion.keyword + fusion.semantic) / (fusion.k + 1.0),
        Combine::Scores | Combine::BoundedScores => fusion.keyword + fusion.semantic,
    };
    let ranked = ranked
        .into_iter()
        .skip(request.offset)
        .take(request.limit)
        .map(|(address, candidate)| Ranked {
            address,
            score: (candidate.fused / best_possible).clamp(0.0, 1.0),
            passage: candidate.passage,
        })
        .collect();
    Ok((Page { ranked, total }, pending))
}

/// What both rankings of one fused search are made from.
struct Sides<'a> {
    searcher: &'a Searcher,
    fields: &'a Fields,
    cache: &'a VectorCache,
    compiled: &'a Compiled,
    fusion: Fusion,
    pool: usize,
}

impl Sides<'_> {
    /// The keyword ranking's best and the nearest documents, `pool` of each, with their fused
    /// scores; and how many allowed documents have no vectors yet. With feedback, a second
    /// pass: the keyword query expanded and the query's vector moved by the first pass's best.
    fn candidates(
        &self,
        semantic: &SemanticQuery,
    ) -> Result<(HashMap<DocAddress, Candidate>, u64), IndexError> {
        let query = QueryVector::new(&semantic.model, &semantic.vector);
        let fusion = self.fusion;
        let first = self.nearest(&query)?;
        let keyword = self.keyword(first.1, &[])?;
        if fusion.term_feedback.is_none() && fusion.vector_feedback.is_none() {
            return self.fuse(&query, first, &keyword);
        }
        let (candidates, pending) = self.fuse(&query, first, &keyword)?;
        let mut best: Vec<(DocAddress, Candidate)> = candidates.into_iter().collect();
        best.sort_by(|a, b| b.1.fused.total_cmp(&a.1.fused).then_with(|| a.0.cmp(&b.0)));
        let moved = match fusion.vector_feedback {
            Some(feedback) => self.moved(&query, &best, feedback)?,
            None => None,
        };
        if moved.is_none() && fusion.term_feedback.is_none() {
            // Nothing to move the query by (no best document both rankings agree on has
            // vectors): the first pass stands.
            return Ok((best.into_iter().collect(), pending));
        }
        let query = match moved {
            Some(moved) => QueryVector::new(&semantic.model, &moved),
            None => query,
        };
        let second = self.nearest(&query)?;
        let keyword = match fusion.term_feedback {
            Some(_) => {
                let docs: Vec<(DocAddress, f32)> =
                    best.iter().map(|(a, c)| (*a, c.fused)).collect();
                self.keyword(pending, &docs)?
            }
            None => keyword,
        };
        self.fuse(&query, second, &keyword)
    }

    /// The `pool` nearest allowed documents with their best passages, nearest first, and how
    /// many allowed documents have no vectors of the query's model.
    fn nearest(&self, query: &QueryVector) -> Result<Nearest, IndexError> {
        nearest(
            self.searcher,
            self.cache,
            self.compiled,
            query,
            self.fusion.passages,
            self.pool,
        )
    }

    /// The keyword side's best, expanded from `feedback` with term feedback. Taken even when
    /// its weight is 0 while vectors are `pending`, to rank those documents; else nothing.
    fn keyword(
        &self,
        pending: u64,
        feedback: &[(DocAddress, f32)],
    ) -> Result<Vec<(DocAddress, f32)>, IndexError> {
        if self.fusion.keyword <= 0.0 && pending == 0 {
            return Ok(Vec::new());
        }
        keyword_side::ranking(
            self.searcher,
            self.fields,
            self.compiled,
            self.fusion,
            self.pool,
            feedback,
        )
    }

    /// The keyword side's best and the nearest, fused.
    fn fuse(
        &self,
        query: &QueryVector,
        (nearest, pending): Nearest,
        keyword: &[(DocAddress, f32)],
    ) -> Result<(HashMap<DocAddress, Candidate>, u64), IndexError> {
        let fusion = self.fusion;
        let mut scratch = Vec::new();
        let mut candidates: HashMap<DocAddress, Candidate> = HashMap::new();
        for (rank, &(address, score)) in keyword.iter().enumerate() {
            let segment = self.searcher.segment_reader(address.segment_ord);
            let vectors = self.cache.get(segment, query)?;
            let candidate = candidates.entry(address).or_default();
            if fusion.keyword > 0.0 {
                candidate.keyword = Some((rank, score));
            }
            if !vectors.has(address.doc_id) {
                candidate.pending = Some((rank, score));
            } else if fusion.combine != Combine::Ranks {
                let best = best_of(
                    &vectors,
                    query,
                    fusion.passages,
                    address.doc_id,
                    &mut scratch,
                );
                // Its similarity counts; its snippet stays where its words are unless it is
                // among the nearest too (below).
                candidate.similarity = best.map(|b| b.similarity);
            }
        }
        for (rank, (address, best)) in nearest.into_iter().enumerate() {
            let candidate = candidates.entry(address).or_default();
            candidate.semantic = Some(rank);
            candidate.similarity = Some(best.similarity);
            candidate.passage = Some(best.passage);
        }
        candidates
            .retain(|_, c| c.keyword.is_some() || c.semantic.is_some() || c.pending.is_some());
        let scales = Scales::of(candidates.values());
        for c in candidates.values_mut() {
            c.fused = fused(fusion, &scales, c);
        }
        Ok((candidates, pending))
    }

    /// The query's vector plus `feedback.weight` times the mean of the best passages of the
    /// first `feedback.docs` documents of `best` (the first pass's, best first) that both
    /// rankings agree on (`feedback.agreement`), those without vectors left out; to unit
    /// length. `None` when no document is left.
    fn moved(
        &self,
        query: &QueryVector,
        best: &[(DocAddress, Candidate)],
        feedback: VectorFeedback,
    ) -> Result<Option<Vec<f32>>, IndexError> {
        let mut sum: Vec<f32> = Vec::new();
        let mut n = 0usize;
        let mut scratch = Vec::new();
        let agreed = |c: &Candidate| match feedback.agreement {
            None => true,
            Some(n) => c.keyword.is_some_and(|k| k.0 < n) && c.semantic.is_some_and(|s| s < n),
        };
        for (address, candidate) in best.iter().filter(|(_, c)| agreed(c)).take(feedback.docs) {
            let segment = self.searcher.segment_reader(address.segment_ord);
            let vectors = self.cache.get(segment, query)?;
            let passage = match candidate.passage {
                Some(p) => Some(p),
                None => best_of(
                    &vectors,
                    query,
                    self.fusion.passages,
                    address.doc_id,
                    &mut scratch,
                )
                .map(|b| b.passage),
            };
            let Some(v) = passage.and_then(|p| passage_vector(&vectors, address.doc_id, p)) else {
                continue;
            };
            if sum.is_empty() {
                sum = vec![0.0; v.len()];
            }
            if v.len() == sum.len() {
                sum.iter_mut().zip(&v).for_each(|(s, x)| *s += x);
                n += 1;
            }
        }
        let own = query.to_floats();
        if n == 0 || own.len() != sum.len() {
            return Ok(None);
        }
        let weight = feedback.weight / n as f32;
        let moved: Vec<f32> = own.iter().zip(&sum).map(|(q, s)| q + weight * s).collect();
        let norm = moved.iter().map(|x| x * x).sum::<f32>().sqrt();
        Ok((norm > 0.0).then(|| moved.iter().map(|x| x / norm).collect()))
    }
}

/// The nearest documents with their best passages, nearest first, and how many allowed
/// documents have no vectors of the query's model.
type Nearest = (Vec<(DocAddress, Best)>, u64);

/// Each ranking's best and worst score among the candidates, for combining scores.
struct Scales {
    keyword: (f32, f32),
    semantic: (f32, f32),
}

impl Scales {
    fn of<'a>(candidates: impl Iterator<Item = &'a Candidate>) -> Scales {
        let mut scales = Scales {
            keyword: (f32::MAX, f32::MIN),
            semantic: (f32::MAX, f32::MIN),
        };
        let widen = |range: &mut (f32, f32), score: f32| {
            range.0 = range.0.min(score);
            range.1 = range.1.max(score);
        };
        for c in candidates {
            if let Some((_, s)) = c.keyword.or(c.pending) {
                widen(&mut scales.keyword, s);
            }
            if let Some(s) = c.similarity {
                widen(&mut scales.semantic, s);
            }
        }
        scales
    }
}

/// `score` placed in `range`: 1 at its best, 0 at its worst (1 when all are alike).
fn scaled(range: (f32, f32), score: f32) -> f32 {
    let (low, high) = range;
    if high > low {
        ((score - low) / (high - low)).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// A candidate's fused score (see [`Combine`]). A document without vectors yet counts its
/// keyword place as its semantic one.
fn fused(fusion: Fusion, scales: &Scales, c: &Candidate) -> f32 {
    match fusion.combine {
        Combine::Ranks => {
            let part = |rank: Option<usize>, weight: f32| {
                rank.map_or(0.0, |r| weight / (fusion.k + 1.0 + r as f32))
            };
            let semantic = c.semantic.or(c.pending.map(|p| p.0));
            part(c.keyword.map(|k| k.0), fusion.keyword) + part(semantic, fusion.semantic)
        }
        Combine::Scores | Combine::BoundedScores => {
            let bounded = fusion.combine == Combine::BoundedScores;
            let keyword_part = |score: f32| match bounded {
                true => scaled((0.0, scales.keyword.1), score),
                false => scaled(scales.keyword, score),
            };
            let semantic = match (c.similarity, c.pending) {
                (Some(similarity), _) if bounded => similarity.clamp(0.0, 1.0),
                (Some(similarity), _) => scaled(scales.semantic, similarity),
                (None, Some((_, score))) => keyword_part(score),
                (None, None) => 0.0,
            };
            let keyword = c.keyword.map_or(0.0, |(_, score)| keyword_part(score));
            fusion.keyword * keyword + fusion.semantic * semantic
        }
    }
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
    passages: Passages,
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
            passages,
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
