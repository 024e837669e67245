//! What the fused-search tests share (`hybrid.rs`, `ranking_levers.rs`): one model's name, a
//! fused request with the query vector (1, 0, 0, 0), and the ids of the hits.

use std::sync::Arc;

use quarry_core::ConnectorId;
use quarry_index::{Fusion, Ranking, SearchRequest, SearchResults, SemanticQuery};

/// The model every test vector belongs to.
pub const MODEL: &str = "test-model";

/// A fused search of connector `cn_a` for `query`, with the query vector (1, 0, 0, 0); the
/// first 100 results.
pub fn fused(query: &str, fusion: Fusion) -> SearchRequest {
    let connector = ConnectorId::parse("cn_a").expect("valid connector id");
    let mut request = SearchRequest::new(query, vec![connector], 100);
    request.ranking = Ranking::Fused(
        SemanticQuery {
            model: MODEL.to_owned(),
            vector: Arc::new(vec![1.0, 0.0, 0.0, 0.0]),
        },
        fusion,
    );
    request
}

/// The ids of the hits, in order.
pub fn ids(results: &SearchResults) -> Vec<&str> {
    results
        .hits
        .iter()
        .map(|h| h.info.doc_id.as_str())
        .collect()
}
