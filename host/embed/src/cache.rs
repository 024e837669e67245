//! A small cache of query vectors: agents often repeat or page through the same query.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Queries remembered at most.
const CAPACITY: usize = 512;
/// How long a query's vector is reused.
const TTL: Duration = Duration::from_secs(600);

/// When a vector was made, and the vector.
type Entry = (Instant, Arc<Vec<f32>>);

/// Query text -> vector, bounded in size and age.
#[derive(Default)]
pub(crate) struct QueryCache {
    entries: Mutex<HashMap<String, Entry>>,
}

impl QueryCache {
    pub(crate) fn get(&self, query: &str) -> Option<Arc<Vec<f32>>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(query)
            .filter(|(at, _)| at.elapsed() < TTL)
            .map(|(_, v)| Arc::clone(v))
    }

    pub(crate) fn put(&self, query: &str, vector: Arc<Vec<f32>>) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= CAPACITY {
            entries.retain(|_, (at, _)| at.elapsed() < TTL);
            if entries.len() >= CAPACITY {
                // Still full of fresh entries: forget the oldest half.
                let mut ages: Vec<Instant> = entries.values().map(|(at, _)| *at).collect();
                ages.sort_unstable();
                let cutoff = ages[ages.len() / 2];
                entries.retain(|_, (at, _)| *at > cutoff);
            }
        }
        entries.insert(query.to_owned(), (Instant::now(), vector));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_bounded_and_returns_what_was_put() {
        let cache = QueryCache::default();
        for i in 0..CAPACITY * 3 {
            cache.put(&format!("q{i}"), Arc::new(vec![i as f32]));
        }
        let last = format!("q{}", CAPACITY * 3 - 1);
        assert_eq!(
            cache.get(&last).map(|v| v[0]),
            Some((CAPACITY * 3 - 1) as f32)
        );
        assert!(cache.entries.lock().map(|e| e.len()).unwrap_or(0) <= CAPACITY);
    }
}
