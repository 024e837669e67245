//! Keyword indexing throughput on Chinese and Japanese text beside English text, in the same run:
//! the same volume of real text of each (English: the abstracts of `../shared/eval`, joined into
//! documents of a manual page's size; Chinese and Japanese: Debian's manual pages, rendered by
//! `scripts/manpages.sh`, which `make bench` runs) written to a fresh index in batches and
//! committed, as the sync writes them. Prints MB/s and documents/s per language, the share of
//! CJK characters in each, and each language's time per MB against English's (aim: within 2x).
//! A fourth corpus keeps only the Chinese pages' lines that are mostly Chinese characters: the
//! most CJK per byte, the worst case for the index.
//!
//! `QUARRY_BENCH_MB` sets the volume per language (default 4), `QUARRY_BENCH_ROUNDS` the rounds
//! (default 3; each language's best is reported); the pages are read from
//! `~/.cache/quarry/eval/manpages` (or `$QUARRY_MANPAGES`).

use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;

use quarry_core::DocMeta;
use quarry_tests::bench::env_or;
use serde_json::Value;

fn main() {
    let bytes = env_or("QUARRY_BENCH_MB", 4) << 20;
    let rounds = env_or("QUARRY_BENCH_ROUNDS", 3).max(1);
    let pages = quarry_tests::manpages_dir();
    assert!(
        pages.join("complete").is_file(),
        "no rendered pages in {}: run scripts/manpages.sh {0} (make bench does)",
        pages.display()
    );
    let eval = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval");
    let corpora = [
        ("English (eval abstracts)", english(&eval, bytes)),
        (
            "Chinese (manpages-zh)",
            rendered(&pages.join("zh_CN"), bytes),
        ),
        ("Japanese (manpages-ja)", rendered(&pages.join("ja"), bytes)),
        (
            "Chinese prose (zh lines)",
            prose(&pages.join("zh_CN"), bytes),
        ),
    ];
    let mut best = vec![Duration::MAX; corpora.len()];
    for _ in 0..rounds {
        for (slot, (_, texts)) in best.iter_mut().zip(&corpora) {
            *slot = (*slot).min(index_all(texts));
        }
    }
    println!(
        "{:<26} {:>7} {:>9} {:>6} {:>8} {:>9} {:>10}",
        "text", "docs", "MB", "CJK", "MB/s", "docs/s", "vs English"
    );
    let per_mb = |texts: &[String], time: Duration| {
        time.as_secs_f64() / (texts.iter().map(String::len).sum::<usize>() as f64 / 1e6)
    };
    let english_per_mb = per_mb(&corpora[0].1, best[0]);
    for ((name, texts), time) in corpora.iter().zip(&best) {
        let mb = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
        println!(
            "{name:<26} {:>7} {mb:>9.1} {:>5.0}% {:>8.1} {:>9.0} {:>9.2}x",
            texts.len(),
            cjk_share(texts) * 100.0,
            mb / time.as_secs_f64(),
            texts.len() as f64 / time.as_secs_f64(),
            per_mb(texts, *time) / english_per_mb
        );
    }
}

/// Abstracts of the eval collections, up to `bytes` in all, joined into documents of about
/// [`DOC_BYTES`] (the manual pages' size), so that each language pays the same per document.
fn english(eval: &Path, bytes: usize) -> Vec<String> {
    let abstracts = ["cranfield", "cisi", "med", "cacm"]
        .into_iter()
        .flat_map(|name| {
            let path = eval.join(name).join("corpus.jsonl");
            let text = std::fs::read_to_string(&path).expect("eval collection");
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|line| {
                    let abstract_: Value = serde_json::from_str(line).expect("json line");
                    let field =
                        |name: &str| abstract_[name].as_str().unwrap_or_default().to_owned();
                    format!("{}\n{}", field("title"), field("text"))
                })
                .collect::<Vec<_>>()
        });
    joined(abstracts, bytes)
}

/// `pieces` (paragraphs, lines) joined by line breaks into documents of about [`DOC_BYTES`],
/// up to `bytes` in all.
fn joined(pieces: impl Iterator<Item = String>, bytes: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut doc = String::new();
    let mut total = 0;
    for piece in pieces {
        doc.push_str(&piece);
        doc.push('\n');
        if doc.len() >= DOC_BYTES {
            total += doc.len();
            out.push(std::mem::take(&mut doc));
            if total >= bytes {
                break;
            }
        }
    }
    out
}

/// About the size of a rendered manual page.
const DOC_BYTES: usize = 8 << 10;

/// The share of the text's characters that are Chinese or Japanese (kana and Han).
fn cjk_share(texts: &[String]) -> f64 {
    let (mut cjk, mut all) = (0usize, 0usize);
    for c in texts.iter().flat_map(|t| t.chars()) {
        all += 1;
        cjk += usize::from(matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{9FFF}'));
    }
    cjk as f64 / all.max(1) as f64
}

/// The lines of the Chinese pages that are mostly Chinese characters (the pages' prose without
/// their option lists and examples), joined into documents of about [`DOC_BYTES`], up to `bytes`
/// in all: the text with the most CJK characters per byte.
fn prose(dir: &Path, bytes: usize) -> Vec<String> {
    let lines = rendered(dir, usize::MAX).into_iter().flat_map(|page| {
        page.lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && cjk_share(&[line.to_string()]) >= 0.6)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    });
    joined(lines, bytes)
}

/// Rendered manual pages of one language, in name order, up to `bytes` in all.
fn rendered(dir: &Path, bytes: usize) -> Vec<String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("rendered pages")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    let mut total = 0;
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a page");
        total += text.len();
        out.push(text);
        if total >= bytes {
            break;
        }
    }
    out
}

/// Indexes `texts` as documents of their own; the time taken.
fn index_all(texts: &[String]) -> Duration {
    common::index_all(
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let meta = DocMeta {
                    title: format!("document {i}"),
                    path: None,
                    url: None,
                    mime_type: "text/plain".into(),
                    size_bytes: text.len() as u64,
                    update_time_ms: 0,
                };
                (meta, text.clone())
            })
            .collect(),
    )
}
