//! `make eval`, third part: questions in one language whose answers are in another. Debian's
//! manual pages in English and in German, French, Japanese and Chinese (rendered by
//! `scripts/manpages.sh`) are paired by file name, a page with its translation. A page's
//! one-line description from its NAME section (`ls - list directory contents`, without the
//! names before the dash) is the question; the answer is the paired page in the other language:
//! - to English: the German, French, Japanese or Chinese description, searched among the English
//!   pages of every pair (one collection for all four languages);
//! - from English: the English description, searched among that language's paired pages.
//!
//! Prints success@10 and MRR for semantic and hybrid search (keyword beside them, for scale;
//! hybrid also by the one-pass reciprocal ranks of before, `Fusion::RANKS`).
//! Each page is indexed by its first [`LINES`] lines (its NAME, SYNOPSIS and the start of its
//! DESCRIPTION), which keeps embedding a few minutes per model; the description is always among
//! them, so the English page holds the answer in English words and its translation in its own.
//!
//! `cargo run --release -p quarry-tests --example eval_cross_language -- [DIR]` (DIR: the
//! rendered pages, default `$QUARRY_MANPAGES` or `~/.cache/quarry/eval/manpages`); the model
//! is `QUARRY_MODEL_DIR`'s.

use std::collections::BTreeMap;
use std::path::PathBuf;

use quarry_embed::Embedder;
use quarry_index::{Fusion, SearchIndex};

use crate::manpages::Score;
use crate::relevance::Doc;

mod manpages;
mod relevance;

/// The languages paired with English: their folder and name.
const LANGUAGES: [(&str, &str); 4] = [
    ("de", "German"),
    ("fr", "French"),
    ("ja", "Japanese"),
    ("zh_CN", "Chinese (simplified)"),
];

/// Lines of a rendered page that are indexed.
const LINES: usize = 60;

/// The modes compared: keyword, semantic alone, hybrid by reciprocal ranks in one pass (the
/// default before the levers of `docs/embedding.md`), and hybrid (the API's default with a
/// model).
const MODES: [(&str, Option<Fusion>); 4] = [
    ("keyword", None),
    ("semantic", Some(Fusion::SEMANTIC_ONLY)),
    ("hybrid by ranks", Some(Fusion::RANKS)),
    ("hybrid", Some(Fusion::HYBRID)),
];

/// A page of one language: its description and its indexed head.
struct Page {
    description: String,
    head: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(quarry_tests::manpages_dir);
    if !dir.join("en").is_dir() {
        return Err(format!(
            "no English pages in {}: run scripts/manpages.sh {0} (make eval does)",
            dir.display()
        )
        .into());
    }
    let embedder = relevance::embedder()?;

    let english = pages(&dir.join("en"))?;
    let translated: Vec<BTreeMap<String, Page>> = LANGUAGES
        .iter()
        .map(|(folder, _)| pages(&dir.join(folder)))
        .collect::<Result<_, _>>()?;
    // The English pages of every pair, in one collection.
    let paired_english: Vec<&String> = english
        .keys()
        .filter(|name| translated.iter().any(|pages| pages.contains_key(*name)))
        .collect();
    let english_docs = docs(paired_english.iter().map(|name| (*name, &english[*name])));
    let english_index =
        relevance::build_index(&format!("cross-en-{LINES}"), &english_docs, Some(&embedder))?;

    println!("\nCross-language search, success@10 / MRR\n");
    println!(
        "| language | pairs | to English: {} | from English: {} |",
        names().join(" | to English: "),
        names().join(" | from English: ")
    );
    println!("|---|---|{}", "---|".repeat(2 * MODES.len()));
    let mut all = vec![Score::default(); 2 * MODES.len()];
    let mut all_pairs = 0;
    for ((folder, language), pages) in LANGUAGES.iter().zip(&translated) {
        let pairs: Vec<&String> = pages.keys().filter(|n| english.contains_key(*n)).collect();
        let their_docs = docs(pairs.iter().map(|name| (*name, &pages[*name])));
        let their_index = relevance::build_index(
            &format!("cross-{folder}-{LINES}"),
            &their_docs,
            Some(&embedder),
        )?;
        let to_english: Vec<(&str, String)> = pairs
            .iter()
            .map(|name| {
                (
                    pages[*name].description.as_str(),
                    id_of(&english_docs, name),
                )
            })
            .collect();
        let from_english: Vec<(&str, String)> = pairs
            .iter()
            .map(|name| {
                (
                    english[*name].description.as_str(),
                    id_of(&their_docs, name),
                )
            })
            .collect();
        let to = scores(&english_index, &embedder, &to_english)?;
        let from = scores(&their_index, &embedder, &from_english)?;
        let row: Vec<Score> = to.into_iter().chain(from).collect();
        let cells: Vec<String> = row.iter().map(Score::cell).collect();
        println!("| {language} | {} | {} |", pairs.len(), cells.join(" | "));
        for (total, score) in all.iter_mut().zip(&row) {
            total.merge(score);
        }
        all_pairs += pairs.len();
    }
    let cells: Vec<String> = all.iter().map(Score::cell).collect();
    println!("| all | {all_pairs} | {} |", cells.join(" | "));
    Ok(())
}

fn names() -> Vec<&'static str> {
    MODES.iter().map(|(name, _)| *name).collect()
}

/// Pages of a language folder that have a description, by file name.
fn pages(dir: &std::path::Path) -> Result<BTreeMap<String, Page>, Box<dyn std::error::Error>> {
    Ok(manpages::manual_pages(dir)?
        .into_iter()
        .filter_map(|doc| {
            let description = description(&doc.text)?;
            let head: Vec<&str> = doc.text.lines().take(LINES).collect();
            Some((
                doc.title,
                Page {
                    description,
                    head: head.join("\n"),
                },
            ))
        })
        .collect())
}

/// The words after the dash of a page's first section (NAME, in every language), or None.
fn description(text: &str) -> Option<String> {
    // Line 1 is the running header; the first line at the margin after it is the section title,
    // the indented lines under it are the section.
    let mut lines = text.lines().skip(1).skip_while(|l| l.trim().is_empty());
    lines.next().filter(|title| !title.starts_with(' '))?;
    let mut joined = String::new();
    for line in lines.take_while(|l| l.starts_with(' ') && !l.trim().is_empty()) {
        // groff hyphenates at a line's end with U+2010; the word goes on at the next line.
        match joined.strip_suffix('\u{2010}') {
            Some(hyphenated) => joined.truncate(hyphenated.len()),
            None if !joined.is_empty() => joined.push(' '),
            None => {}
        }
        joined.push_str(line.trim());
    }
    let (_, after) = joined.split_once(" - ")?;
    let after = after.trim();
    (after.chars().count() >= 2).then(|| after.to_owned())
}

/// Documents of the named pages, ids in order.
fn docs<'a>(pages: impl Iterator<Item = (&'a String, &'a Page)>) -> Vec<Doc> {
    pages
        .enumerate()
        .map(|(i, (name, page))| Doc {
            id: i.to_string(),
            title: name.clone(),
            text: page.head.clone(),
        })
        .collect()
}

fn id_of(docs: &[Doc], name: &str) -> String {
    docs.iter()
        .find(|d| d.title == name)
        .map(|d| d.id.clone())
        .unwrap_or_default()
}

/// Scores of `queries` (text, target id) on `index`, per mode of [`MODES`].
fn scores(
    index: &SearchIndex,
    embedder: &Embedder,
    queries: &[(&str, String)],
) -> Result<Vec<Score>, Box<dyn std::error::Error>> {
    MODES
        .iter()
        .map(|(_, fusion)| {
            let mut score = Score::default();
            for (query, target) in queries {
                let ranked = relevance::search(index, Some(embedder), query, *fusion, 100)?;
                score.add(&ranked, target);
            }
            Ok(score)
        })
        .collect()
}
