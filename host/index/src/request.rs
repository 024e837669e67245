//! What a search asks for: the query, filters, ordering, paging and ranking. Plain data, already
//! validated by the caller; the other search modules read it.

use std::sync::Arc;

use quarry_core::ConnectorId;

/// What results must satisfy besides the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filters {
    /// Only these connectors (never empty: callers pass the connectors the caller may see).
    pub connectors: Vec<ConnectorId>,
    /// Update time from (inclusive), milliseconds since the Unix epoch.
    pub updated_from_ms: Option<i64>,
    /// Update time to (exclusive).
    pub updated_to_ms: Option<i64>,
    /// Only these extensions, lowercase without the dot.
    pub extensions: Option<Vec<String>>,
}

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

/// How a fused search ranks: the two rankings' weights and how they are combined, and the
/// levers measured on the collections of `make eval` (`docs/embedding.md` has the figures: those
/// that helped on average and hurt none are on in [`Fusion::HYBRID`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// The constant k of reciprocal rank fusion: larger values flatten the difference between
    /// top ranks (unused when combining scores).
    pub k: f32,
    /// Weight of the keyword ranking.
    pub keyword: f32,
    /// Weight of the semantic ranking.
    pub semantic: f32,
    /// How the two rankings make one.
    pub combine: Combine,
    /// The keyword ranking ranks documents with every word first, as keyword mode does; without
    /// it, by BM25 alone.
    pub tiers: bool,
    /// Extra weight of a query word found in the title, on the keyword side (0: none beyond
    /// the title's words counting as the text's).
    pub title: f32,
    /// How a document's passages make its semantic score.
    pub passages: Passages,
    /// Pseudo-relevance feedback on the keyword side: the query's stems and those most typical
    /// of the first pass's best results (RM3).
    pub term_feedback: Option<TermFeedback>,
    /// Pseudo-relevance feedback on the semantic side: the query's vector moved towards the
    /// first pass's best documents (Rocchio).
    pub vector_feedback: Option<VectorFeedback>,
}

/// How the two rankings of a fused search make one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Combine {
    /// Weighted reciprocal rank fusion: a document at (1-based) rank r of a ranking gets that
    /// ranking's weight / (k + r).
    Ranks,
    /// Each ranking's scores scaled to [0, 1] over the candidates (best 1, worst 0), weighted
    /// and added; every candidate with vectors has its semantic score, not only the nearest.
    Scores,
    /// As [`Combine::Scores`], but scaled against their natural floor: BM25 over the best
    /// candidate's (0 at 0), and the cosine similarity as it is.
    BoundedScores,
}

/// How a document's passages make its semantic score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Passages {
    /// The best passage's similarity.
    Best,
    /// The mean similarity of its best `n` passages (fewer when it has fewer).
    MeanOfBest(usize),
    /// The best passage's similarity plus this weight times the second best's.
    BestAndSecond(f32),
}

/// RM3-like expansion of the keyword side: from the first pass's best `docs` documents (fused),
/// the `terms` stems most typical of them join the query, which keeps `original` of the
/// weight; a second pass ranks by the expanded query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TermFeedback {
    /// Documents the expansion is drawn from.
    pub docs: usize,
    /// Stems added at most.
    pub terms: usize,
    /// Share of the weight the query's own stems keep, in (0, 1].
    pub original: f32,
}

/// Rocchio on the query's vector: the query plus `weight` times the mean of the best passages
/// of the first pass's best `docs` documents (fused) that both rankings agree on, then searched
/// again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorFeedback {
    /// Documents averaged, at most.
    pub docs: usize,
    /// Weight of their mean against the query's 1.
    pub weight: f32,
    /// Only documents among the first this many of both the keyword and the semantic ranking
    /// give feedback (`None`: any of the first pass's best). Where the two disagree (a question
    /// in one language over documents in another, whose words match nothing), feedback would
    /// drift towards the wrong documents.
    pub agreement: Option<usize>,
}

impl Fusion {
    /// What `semantic_search: true` uses (chosen on the four collections of `make eval`,
    /// `docs/embedding.md` "Sharper ranking"): the two rankings' scores scaled among the
    /// candidates, keyword weighed 0.4 against semantic 1, and a second pass with the query's
    /// vector moved halfway towards the first pass's best three documents among those in the
    /// first 20 of both rankings.
    pub const HYBRID: Fusion = Fusion {
        k: 60.0,
        keyword: 0.4,
        semantic: 1.0,
        combine: Combine::Scores,
        tiers: true,
        title: 0.0,
        passages: Passages::Best,
        term_feedback: None,
        vector_feedback: Some(VectorFeedback {
            docs: 3,
            weight: 0.5,
            agreement: Some(20),
        }),
    };
    /// Reciprocal rank fusion in one pass (k 60, keyword 0.8 against semantic 1; chosen among
    /// k 10-100 and keyword 0.6-1): the default until the levers were measured, and the
    /// baseline `make eval` and `make bench` measure them against.
    pub const RANKS: Fusion = Fusion {
        k: 60.0,
        keyword: 0.8,
        semantic: 1.0,
        combine: Combine::Ranks,
        tiers: true,
        title: 0.0,
        passages: Passages::Best,
        term_feedback: None,
        vector_feedback: None,
    };
    /// The semantic ranking alone, one pass (for measuring the model; the API always fuses).
    pub const SEMANTIC_ONLY: Fusion = Fusion {
        keyword: 0.0,
        ..Fusion::RANKS
    };
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
    /// Relevance or update time.
    pub sort_by: SortBy,
    /// Which end of `sort_by` comes first.
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
