//! Debian's manual pages as `scripts/manpages.sh` renders them (one folder of text files per
//! language), for the evaluations in languages other than English, and their known-item score.

use std::path::{Path, PathBuf};

use crate::relevance::Doc;

/// Success@10 and reciprocal ranks, summed.
#[derive(Default, Clone, Copy)]
pub struct Score {
    /// Queries counted.
    pub queries: usize,
    /// Queries whose answer was in the top 10.
    pub found_in_10: usize,
    /// The sum of 1 / the answer's rank (0 where it was not found).
    pub reciprocal_ranks: f64,
}

impl Score {
    /// Counts a query whose answer is `target`, given the ids `ranked` for it.
    pub fn add(&mut self, ranked: &[String], target: &str) {
        self.queries += 1;
        if let Some(rank) = ranked.iter().position(|id| id == target) {
            self.reciprocal_ranks += 1.0 / (rank + 1) as f64;
            if rank < 10 {
                self.found_in_10 += 1;
            }
        }
    }

    /// `success@10 / MRR`, or `-` without queries.
    pub fn cell(&self) -> String {
        if self.queries == 0 {
            return "-".to_owned();
        }
        let n = self.queries.max(1) as f64;
        format!(
            "{:.3} / {:.3}",
            self.found_in_10 as f64 / n,
            self.reciprocal_ranks / n
        )
    }

    /// Adds `other`'s queries to these.
    pub fn merge(&mut self, other: &Score) {
        self.queries += other.queries;
        self.found_in_10 += other.found_in_10;
        self.reciprocal_ranks += other.reciprocal_ranks;
    }
}

/// The manual pages of one language as `scripts/manpages.sh` renders them, in file name order:
/// ids are their places in it, titles their file names without `.txt` (`man1-ls.1`).
pub fn manual_pages(dir: &Path) -> Result<Vec<Doc>, Box<dyn std::error::Error>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    paths.sort();
    paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            Ok(Doc {
                id: i.to_string(),
                title: path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                text: std::fs::read_to_string(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
            })
        })
        .collect()
}
