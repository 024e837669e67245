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
