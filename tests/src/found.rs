//! What a keyword search finds, as the connector tests look at it: the titles or paths of the
//! results, the first result and its document, and waiting until a search finds what a change
//! on the source should make it find.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::quarry::Quarry;

/// The `field` (`title`, `path`) of each result a keyword search for `query` finds.
pub fn results(q: &Quarry, key: &str, query: &str, field: &str) -> Vec<String> {
    q.keyword_search(key, query, 50)["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r[field].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The titles a keyword search finds.
pub fn titles(q: &Quarry, key: &str, query: &str) -> Vec<String> {
    results(q, key, query, "title")
}

/// The paths a keyword search finds.
pub fn paths(q: &Quarry, key: &str, query: &str) -> Vec<String> {
    results(q, key, query, "path")
}

/// The doc id of the result a keyword search for `query` finds at `path`.
pub fn doc_id(q: &Quarry, key: &str, query: &str, path: &str) -> String {
    let found = q.keyword_search(key, query, 20);
    found["results"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["path"] == path)
        .and_then(|r| r["doc_id"].as_str())
        .unwrap_or_else(|| panic!("{query}: no result at {path}: {found}"))
        .to_owned()
}

/// The first result a keyword search finds.
pub fn first(q: &Quarry, key: &str, query: &str) -> Value {
    q.keyword_search(key, query, 5)["results"][0].clone()
}

/// The document answer of the first result of `query`.
pub fn read_first(q: &Quarry, key: &str, query: &str) -> Value {
    let hit = first(q, key, query);
    q.request(
        "GET",
        &format!(
            "/api/v1/connectors/{}/docs/{}",
            hit["connector_id"].as_str().unwrap_or_default(),
            hit["doc_id"].as_str().unwrap_or_default()
        ),
        Some(key),
        None,
    )
    .json()
}

/// Waits (up to `limit`) until `query` finds exactly `expected` as `field` of its results;
/// answers how long it took.
pub fn wait_until_found(
    q: &Quarry,
    key: &str,
    (query, field): (&str, &str),
    expected: &[&str],
    limit: Duration,
) -> Duration {
    let started = Instant::now();
    loop {
        let found = results(q, key, query, field);
        if found == expected {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "{query:?} found {found:?}, not {expected:?}, within {limit:?}\nserver log:\n{}",
            q.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
