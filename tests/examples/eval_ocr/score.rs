//! Scoring what an engine read against the reference text: character error rate, recall of
//! words (English) or characters (Chinese, Japanese), and the time taken.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use image::GrayImage;

use crate::pages::Page;

/// One engine's figures on one set.
pub struct Score {
    pub cer: f64,
    pub recall: f64,
    pub seconds: f64,
}

/// Character error rate, recall and time of `read` over `pages`.
pub fn score(pages: &[Page], cjk: bool, read: impl Fn(&GrayImage) -> String) -> Score {
    let mut took = Duration::ZERO;
    let texts: Vec<String> = pages
        .iter()
        .map(|page| {
            let started = Instant::now();
            let text: Vec<String> = page.images.iter().map(&read).collect();
            took += started.elapsed();
            text.join("\n")
        })
        .collect();
    scored(pages, &texts, cjk, took.as_secs_f64())
}

/// Character error rate and recall of `texts`, read of `pages` in `seconds`.
pub fn scored(pages: &[Page], texts: &[String], cjk: bool, seconds: f64) -> Score {
    let (mut errors, mut length, mut found, mut wanted) = (0usize, 0usize, 0usize, 0usize);
    for (page, text) in pages.iter().zip(texts) {
        let (reference, hypothesis) = (normalized(&page.reference, cjk), normalized(text, cjk));
        errors += edit_distance(&reference, &hypothesis);
        length += reference.len();
        let (units, read_units) = if cjk {
            (chars_of(&page.reference), chars_of(text))
        } else {
            (words_of(&page.reference), words_of(text))
        };
        let mut left: HashMap<String, usize> = HashMap::new();
        for unit in read_units {
            *left.entry(unit).or_default() += 1;
        }
        for unit in units {
            wanted += 1;
            if let Some(n) = left.get_mut(&unit).filter(|n| **n > 0) {
                *n -= 1;
                found += 1;
            }
        }
    }
    Score {
        cer: errors as f64 / length.max(1) as f64,
        recall: found as f64 / wanted.max(1) as f64,
        seconds,
    }
}

/// The characters of `text` compared: whitespace removed (Chinese, Japanese) or collapsed to one
/// space (English).
fn normalized(text: &str, cjk: bool) -> Vec<char> {
    if cjk {
        return text.chars().filter(|c| !c.is_whitespace()).collect();
    }
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect()
}

/// English words: runs of letters and digits, lowercased.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Characters other than whitespace and punctuation.
fn chars_of(text: &str) -> Vec<String> {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .map(String::from)
        .collect()
}

/// Levenshtein distance between two character sequences.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}
