//! The previews drawn lately, by document version, page and width, within a bound in bytes:
//! the least recently used go first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::drawn::Drawn;

/// What a preview is drawn from: the connector, the document and its version, the page, the
/// width.
pub(crate) type Key = (String, String, String, u32, u32);

pub(crate) struct PreviewCache {
    limit: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Key, (Arc<Drawn>, u64)>,
    bytes: usize,
    clock: u64,
}

impl PreviewCache {
    pub(crate) fn new(limit: usize) -> PreviewCache {
        PreviewCache {
            limit,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The preview kept for `key`, now the most recently used.
    pub(crate) fn get(&self, key: &Key) -> Option<Arc<Drawn>> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.clock += 1;
        let clock = inner.clock;
        let (drawn, used) = inner.entries.get_mut(key)?;
        *used = clock;
        Some(drawn.clone())
    }

    /// Keeps `drawn` for `key`, letting the least recently used go while over the bound; one
    /// larger than the bound is not kept.
    pub(crate) fn put(&self, key: Key, drawn: Arc<Drawn>) {
        let size = drawn.bytes();
        if size > self.limit {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.clock += 1;
        let clock = inner.clock;
        if let Some((old, _)) = inner.entries.insert(key, (drawn, clock)) {
            inner.bytes -= old.bytes();
        }
        inner.bytes += size;
        while inner.bytes > self.limit {
            let Some(oldest) = inner
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            if let Some((gone, _)) = inner.entries.remove(&oldest) {
                inner.bytes -= gone.bytes();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drawn(bytes: usize) -> Arc<Drawn> {
        Arc::new(Drawn {
            png: vec![0; bytes],
            width: 1,
            height: 1,
            page_count: 1,
            words: Vec::new(),
            read: false,
        })
    }

    fn key(page: u32) -> Key {
        ("cn_a".into(), "d".into(), "v1".into(), page, 800)
    }

    #[test]
    fn the_least_recently_used_preview_goes_first_and_the_bound_holds() {
        let cache = PreviewCache::new(300);
        cache.put(key(1), drawn(100));
        cache.put(key(2), drawn(100));
        cache.put(key(3), drawn(100));
        assert!(cache.get(&key(1)).is_some(), "page 1 is used again");
        cache.put(key(4), drawn(100));
        assert!(cache.get(&key(2)).is_none(), "the least recently used went");
        for page in [1, 3, 4] {
            assert!(cache.get(&key(page)).is_some(), "page {page} is kept");
        }
        cache.put(key(5), drawn(301));
        assert!(
            cache.get(&key(5)).is_none(),
            "a preview over the bound is not kept"
        );
        let other_version = ("cn_a".into(), "d".into(), "v2".into(), 1, 800);
        assert!(
            cache.get(&other_version).is_none(),
            "a new version is drawn again"
        );
    }
}
