//! `make eval`, second part: known-item search on real Chinese and Japanese text. Debian's
//! `manpages-zh` (simplified and traditional) and `manpages-ja`, rendered to text by
//! `scripts/manpages.sh`, are indexed through the real pipeline; queries are drawn from the pages
//! themselves with a fixed seed, and each must find the page it was drawn from. Prints
//! success@10 and MRR for keyword and semantic search, per language and per kind of query.
//!
//! `cargo run --release -p quarry-tests --example eval_languages -- [DIR] [--queries N]
//! [--keyword-only]` (DIR: the rendered pages, default `$QUARRY_MANPAGES` or
//! `~/.cache/quarry/eval/manpages`; N per language, default 300; `--keyword-only` loads no model
//! and measures keyword search alone).
//! Queries are of three kinds, drawn in turn:
//! - `inside`: 2 to 4 characters from inside a sentence, starting and ending mid-run (never at
//!   a punctuation mark or a space), as a person remembers a word of a text without spaces;
//! - `term`: a whole run between punctuation, spaces or Latin text (2 to 6 characters);
//! - `two words`: two `inside` draws of 2 or 3 characters from two different runs of the page.
//!
//! Runs are of kana and the main Han blocks (this program's own, narrower than the index's).
//! A draw is kept when at most 10 pages of its collection contain it as written (both parts,
//! for two words), so that the page it was drawn from can be told apart by it: success@10 then
//! mostly measures whether matching finds the page at all, and MRR how it ranks among the few
//! that share the query. The traditional collection is searched a second time with its queries
//! in simplified characters (converted by `fast2s`, by words where it converts by context), as
//! a reader of simplified Chinese would type them.

use quarry_embed::Embedder;
use quarry_index::{Fusion, SearchIndex};
use quarry_tests::rng::Rng;
use std::path::PathBuf;

use crate::manpages::Score;
use crate::relevance::Doc;

mod manpages;
mod relevance;

/// The collections: a folder of rendered pages each.
const LANGUAGES: [(&str, &str); 3] = [
    ("zh_CN", "Chinese (simplified)"),
    ("zh_TW", "Chinese (traditional)"),
    ("ja", "Japanese"),
];

/// The kinds of query, drawn in turn.
const KINDS: [&str; 3] = ["inside", "term", "two words"];

/// Pages a kept query may be found in, at most.
const MAX_PAGES_WITH_QUERY: usize = 10;

/// A drawn query and the page it came from.
struct Query {
    text: String,
    kind: usize,
    target: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = quarry_tests::manpages_dir();
    let mut per_language = 300usize;
    let mut with_model = true;
    while let Some(arg) = args.next() {
        if arg == "--keyword-only" {
            with_model = false;
        } else if arg == "--queries" {
            per_language = args.next().ok_or("--queries needs a number")?.parse()?;
        } else {
            dir = PathBuf::from(arg);
        }
    }
    if !dir.join("complete").is_file() {
        return Err(format!(
            "no rendered pages in {}: run scripts/manpages.sh {0} (make eval does)",
            dir.display()
        )
        .into());
    }
    let embedder = if with_model {
        Some(relevance::embedder()?)
    } else {
        None
    };
    let embedder = embedder.as_ref();

    let mut rows = Vec::new();
    for (folder, language) in LANGUAGES {
        let docs = manpages::manual_pages(&dir.join(folder))?;
        let index = relevance::build_index(&format!("manpages-{folder}"), &docs, embedder)?;
        let queries = draw(&docs, per_language);
        let mut searches = vec![(language.to_owned(), queries)];
        if folder == "zh_TW" {
            let simplified = searches[0]
                .1
                .iter()
                .map(|q| Query {
                    text: fast2s::convert(&q.text),
                    kind: q.kind,
                    target: q.target.clone(),
                })
                .collect();
            searches.push((format!("{language}, simplified queries"), simplified));
        }
        for (i, (name, queries)) in searches.into_iter().enumerate() {
            let keyword = evaluate(&index, None, &queries, None)?;
            let semantic = match embedder {
                Some(_) => evaluate(&index, embedder, &queries, Some(Fusion::SEMANTIC_ONLY))?,
                None => [Score::default(); 4],
            };
            // Only the first search of a collection counts in the total (the second repeats its
            // queries in the other script).
            rows.push((name, docs.len(), queries.len(), keyword, semantic, i == 0));
        }
    }

    println!("\nKnown-item search, success@10 / MRR\n");
    println!(
        "| collection | pages | queries | keyword | semantic | keyword: {} |",
        KINDS.join(" | keyword: ")
    );
    println!("|---|---|---|---|---|{}", "---|".repeat(KINDS.len()));
    let mut all = ([Score::default(); 4], [Score::default(); 4]);
    for (language, pages, queries, keyword, semantic, in_total) in &rows {
        let kinds: Vec<String> = keyword[1..].iter().map(Score::cell).collect();
        println!(
            "| {language} | {pages} | {queries} | {} | {} | {} |",
            keyword[0].cell(),
            semantic[0].cell(),
            kinds.join(" | ")
        );
        for i in (0..4).filter(|_| *in_total) {
            all.0[i].merge(&keyword[i]);
            all.1[i].merge(&semantic[i]);
        }
    }
    let kinds: Vec<String> = all.0[1..].iter().map(Score::cell).collect();
    println!(
        "| all | | {} | {} | {} | {} |",
        all.0[0].queries,
        all.0[0].cell(),
        all.1[0].cell(),
        kinds.join(" | ")
    );
    Ok(())
}

/// Keyword or semantic (with `fusion`) scores: overall, then per kind of query.
fn evaluate(
    index: &SearchIndex,
    embedder: Option<&Embedder>,
    queries: &[Query],
    fusion: Option<Fusion>,
) -> Result<[Score; 4], Box<dyn std::error::Error>> {
    let mut scores = [Score::default(); 4];
    for query in queries {
        let ranked = relevance::search(index, embedder, &query.text, fusion, 100)?;
        scores[0].add(&ranked, &query.target);
        scores[1 + query.kind].add(&ranked, &query.target);
    }
    Ok(scores)
}

/// Whether `c` is written without spaces between words (kana and Han characters).
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}')
}

/// The page's text as read: a line break (with the next line's indentation) between two
/// characters of a sentence is no break, as a reader of a wrapped paragraph sees it.
fn as_read(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' && out.chars().next_back().is_some_and(is_cjk) {
            let mut j = i + 1;
            while j < chars.len() && matches!(chars[j], ' ' | '\t') {
                j += 1;
            }
            if chars.get(j).copied().is_some_and(is_cjk) {
                i = j;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The runs of CJK characters of a text.
fn runs(text: &str) -> Vec<Vec<char>> {
    let mut runs = Vec::new();
    let mut run = Vec::new();
    for c in text.chars() {
        if is_cjk(c) {
            run.push(c);
        } else if !run.is_empty() {
            runs.push(std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

/// `per_language` queries (or fewer, if draws keep failing), the same on every run.
fn draw(docs: &[Doc], per_language: usize) -> Vec<Query> {
    let texts: Vec<String> = docs.iter().map(|d| as_read(&d.text)).collect();
    let runs: Vec<Vec<Vec<char>>> = texts.iter().map(|t| runs(t)).collect();
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);
    let mut out = Vec::new();
    let mut attempts = 0;
    while out.len() < per_language && attempts < per_language * 200 {
        attempts += 1;
        let kind = out.len() % KINDS.len();
        let page = rng.below(docs.len());
        let parts = match kind {
            0 => inside(&runs[page], 2, 4, &mut rng).map(|(_, p)| vec![p]),
            1 => term(&runs[page], &mut rng).map(|p| vec![p]),
            _ => match (
                inside(&runs[page], 2, 3, &mut rng),
                inside(&runs[page], 2, 3, &mut rng),
            ) {
                (Some((i, a)), Some((j, b))) if i != j && a != b => Some(vec![a, b]),
                _ => None,
            },
        };
        let Some(parts) = parts else { continue };
        let pages_with = texts
            .iter()
            .filter(|t| parts.iter().all(|p| t.contains(p.as_str())))
            .count();
        if pages_with == 0 || pages_with > MAX_PAGES_WITH_QUERY {
            continue;
        }
        out.push(Query {
            text: parts.join(" "),
            kind,
            target: docs[page].id.clone(),
        });
    }
    out
}

/// `min..=max` characters from inside one of `runs` (not at its first or last character), with
/// the run's index.
fn inside(runs: &[Vec<char>], min: usize, max: usize, rng: &mut Rng) -> Option<(usize, String)> {
    let long: Vec<usize> = (0..runs.len())
        .filter(|&i| runs[i].len() >= max + 2)
        .collect();
    if long.is_empty() {
        return None;
    }
    let index = *rng.pick(&long);
    let run = &runs[index];
    let len = min + rng.below(max - min + 1);
    let start = 1 + rng.below(run.len() - len - 1);
    Some((index, run[start..start + len].iter().collect()))
}

/// One of `runs` whole, of 2 to 6 characters.
fn term(runs: &[Vec<char>], rng: &mut Rng) -> Option<String> {
    let short: Vec<&Vec<char>> = runs.iter().filter(|r| (2..=6).contains(&r.len())).collect();
    if short.is_empty() {
        return None;
    }
    Some(rng.pick(&short).iter().collect())
}
