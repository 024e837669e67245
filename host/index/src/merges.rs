//! How segments are merged: tantivy's log merge policy, with no single merge over
//! [`MAX_DOCS_PER_MERGE`] documents.
//!
//! A merge maps every segment it reads, and their pages stay resident until it ends: the log
//! policy's last merge of a first sync of 1,000,000 small files read the whole index at once
//! (about 450 MB) and lifted the server's resident memory from 320 MiB to 730 MiB for its
//! duration. Bounded (and run one at a time, `lib.rs`), an index that large keeps a few
//! segments of about a quarter of a million documents each, which a search reads one after
//! another.

use tantivy::index::SegmentMeta;
use tantivy::indexer::{LogMergePolicy, MergeCandidate, MergePolicy};

/// Documents a merge may write at most (the sum of its segments' live documents).
pub(crate) const MAX_DOCS_PER_MERGE: usize = 250_000;

/// tantivy's log merge policy, each candidate cut into merges of at most
/// [`MAX_DOCS_PER_MERGE`] documents.
#[derive(Debug, Default)]
pub(crate) struct BoundedMerges {
    log: LogMergePolicy,
}

impl MergePolicy for BoundedMerges {
    fn compute_merge_candidates(&self, segments: &[SegmentMeta]) -> Vec<MergeCandidate> {
        let docs = |id| {
            segments
                .iter()
                .find(|s| s.id() == id)
                .map_or(0, |s| s.num_docs() as usize)
        };
        let mut merges = Vec::new();
        for MergeCandidate(ids) in self.log.compute_merge_candidates(segments) {
            let mut group = Vec::new();
            let mut total = 0;
            for id in ids {
                let n = docs(id);
                if !group.is_empty() && total + n > MAX_DOCS_PER_MERGE {
                    merges.push(std::mem::take(&mut group));
                    total = 0;
                }
                group.push(id);
                total += n;
            }
            merges.push(group);
        }
        // A segment alone (one already at the bound) is left as it is.
        merges
            .into_iter()
            .filter(|group| group.len() > 1)
            .map(MergeCandidate)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use tantivy::Index;
    use tantivy::index::SegmentId;
    use tantivy::schema::Schema;

    use super::*;

    fn segments(index: &Index, sizes: &[u32]) -> Vec<SegmentMeta> {
        sizes
            .iter()
            .map(|&n| index.new_segment_meta(SegmentId::generate_random(), n))
            .collect()
    }

    fn merge_sizes(segments: &[SegmentMeta]) -> Vec<usize> {
        let mut sizes: Vec<usize> = BoundedMerges::default()
            .compute_merge_candidates(segments)
            .iter()
            .map(|MergeCandidate(ids)| {
                ids.iter()
                    .map(|id| {
                        segments
                            .iter()
                            .find(|s| s.id() == *id)
                            .map_or(0, |s| s.num_docs() as usize)
                    })
                    .sum()
            })
            .collect();
        sizes.sort_unstable();
        sizes
    }

    #[test]
    fn small_segments_merge_as_the_log_policy_says() {
        let index = Index::create_in_ram(Schema::builder().build());
        assert_eq!(merge_sizes(&segments(&index, &[10_000; 8])), [80_000]);
        assert!(merge_sizes(&segments(&index, &[10_000; 7])).is_empty());
    }

    #[test]
    fn no_merge_writes_more_than_the_bound() {
        let index = Index::create_in_ram(Schema::builder().build());
        let sizes = merge_sizes(&segments(&index, &[120_000; 8]));
        assert_eq!(sizes, [240_000; 4]);
        // Segments at the bound are left alone.
        assert!(merge_sizes(&segments(&index, &[250_000; 8])).is_empty());
    }
}
