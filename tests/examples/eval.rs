//! `make eval`: indexes each relevance collection of `../shared/eval` through the real pipeline
//! (the sync's chunking and embedding, the index's writer) and runs every judged query through
//! the search the API runs, in keyword, semantic and hybrid mode; prints nDCG@10 and Recall@100
//! beside the reference BM25 row. Queries are passed as plain words (see [`as_words`]).
//!
//! `cargo run --release -p quarry-tests --example eval -- [DIR] [--fusion K:KEYWORD:SEMANTIC]...`
//! Indexes are kept under `~/.cache/quarry/eval` per model, so later runs only search; extra
//! `--fusion` settings are measured beside the default (to choose it, not to tune per query).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use quarry_embed::Embedder;
use quarry_index::{Fusion, SearchIndex};
use serde_json::Value;

use crate::relevance::Doc;

mod relevance;

/// Reference BM25 nDCG@10 and Recall@100, from `../shared/eval/README.md`.
const REFERENCE: [(&str, f64, f64); 4] = [
    ("cranfield", 0.370, 0.735),
    ("cisi", 0.381, 0.436),
    ("med", 0.699, 0.790),
    ("cacm", 0.500, 0.672),
];

struct Collection {
    name: String,
    docs: Vec<Doc>,
    queries: Vec<(String, String)>,
    /// query -> doc -> grade
    qrels: HashMap<String, HashMap<String, i64>>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval");
    let mut fusions = vec![("hybrid".to_owned(), Fusion::HYBRID)];
    while let Some(arg) = args.next() {
        if arg == "--fusion" {
            let spec = args.next().ok_or("--fusion needs K:KEYWORD:SEMANTIC")?;
            let parts: Vec<f32> = spec
                .split(':')
                .map(str::parse)
                .collect::<Result<_, _>>()
                .map_err(|e| format!("--fusion {spec}: {e}"))?;
            let [k, keyword, semantic] = parts[..] else {
                return Err(format!("--fusion {spec}: want K:KEYWORD:SEMANTIC").into());
            };
            fusions.push((
                format!("rrf {spec}"),
                Fusion {
                    k,
                    keyword,
                    semantic,
                },
            ));
        } else {
            dir = PathBuf::from(arg);
        }
    }
    let embedder = Arc::new(relevance::embedder()?);
    let mut rows = Vec::new();
    for (name, ref_ndcg, ref_recall) in REFERENCE {
        let collection = load(&dir.join(name))?;
        let index = relevance::build_index(&collection.name, &collection.docs, Some(&embedder))?;
        let mut modes: Vec<(String, Option<Fusion>)> = vec![
            ("keyword".into(), None),
            ("semantic".into(), Some(Fusion::SEMANTIC_ONLY)),
        ];
        modes.extend(fusions.iter().map(|(n, f)| (n.clone(), Some(*f))));
        let started = Instant::now();
        let mut scores = Vec::new();
        for (mode, fusion) in &modes {
            let (ndcg, recall) = evaluate(&collection, &index, &embedder, *fusion)?;
            scores.push((mode.clone(), ndcg, recall));
        }
        let searches = collection.qrels.len() * modes.len();
        println!(
            "{name}: {} docs, {} judged queries, {searches} searches in {:.1} s",
            collection.docs.len(),
            collection.qrels.len(),
            started.elapsed().as_secs_f64()
        );
        rows.push((name, scores, ref_ndcg, ref_recall));
    }
    println!("\nnDCG@10 / Recall@100 (reference: BM25 with stemming and stop words)\n");
    let header: Vec<String> = rows
        .first()
        .map(|(_, s, _, _)| s.iter().map(|(m, _, _)| m.clone()).collect())
        .unwrap_or_default();
    println!("| collection | {} | BM25 reference |", header.join(" | "));
    println!("|---|{}---|", "---|".repeat(header.len()));
    for (name, scores, ref_ndcg, ref_recall) in &rows {
        let cells: Vec<String> = scores
            .iter()
            .map(|(_, n, r)| format!("{n:.3} / {r:.3}"))
            .collect();
        println!(
            "| {name} | {} | {ref_ndcg:.3} / {ref_recall:.3} |",
            cells.join(" | ")
        );
    }
    Ok(())
}

fn read_jsonl(path: &Path) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?)
}

fn load(dir: &Path) -> Result<Collection, Box<dyn std::error::Error>> {
    let field = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_owned();
    let docs = read_jsonl(&dir.join("corpus.jsonl"))?
        .iter()
        .map(|d| Doc {
            id: field(d, "_id"),
            title: field(d, "title"),
            text: field(d, "text"),
        })
        .collect();
    let queries = read_jsonl(&dir.join("queries.jsonl"))?
        .iter()
        .map(|q| (field(q, "_id"), as_words(&field(q, "text"))))
        .collect();
    let mut qrels: HashMap<String, HashMap<String, i64>> = HashMap::new();
    let qrels_text = std::fs::read_to_string(dir.join("qrels.tsv"))?;
    for line in qrels_text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [q, d, score] = cols[..] {
            let grade: i64 = score.trim().parse()?;
            if grade > 0 {
                qrels
                    .entry(q.to_owned())
                    .or_default()
                    .insert(d.to_owned(), grade);
            }
        }
    }
    Ok(Collection {
        name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        docs,
        queries,
        qrels,
    })
}

/// A collection's query as plain words: these queries are prose, where quotes cite titles and a
/// dash joins words, not the API's query syntax (a required "phrase", a -word exclusion).
fn as_words(query: &str) -> String {
    query
        .split_whitespace()
        .map(|w| w.trim_start_matches('-').replace('"', " "))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Mean nDCG@10 and Recall@100 over the judged queries.
fn evaluate(
    collection: &Collection,
    index: &SearchIndex,
    embedder: &Embedder,
    fusion: Option<Fusion>,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let (mut ndcg, mut recall, mut n) = (0.0, 0.0, 0usize);
    for (qid, text) in &collection.queries {
        let Some(judged) = collection.qrels.get(qid) else {
            continue;
        };
        let ranked = relevance::search(index, Some(embedder), text, fusion, 100)?;
        ndcg += ndcg_at(&ranked, judged, 10);
        let found = ranked.iter().filter(|d| judged.contains_key(*d)).count();
        recall += found as f64 / judged.len() as f64;
        n += 1;
    }
    let n = n.max(1) as f64;
    Ok((ndcg / n, recall / n))
}

/// nDCG at `k` with linear gains (trec_eval's and BEIR's convention).
fn ndcg_at(ranked: &[String], judged: &HashMap<String, i64>, k: usize) -> f64 {
    let discount = |i: usize| 1.0 / ((i + 2) as f64).log2();
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, d)| judged.get(d).copied().unwrap_or(0) as f64 * discount(i))
        .sum();
    let mut ideal: Vec<i64> = judged.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| *g as f64 * discount(i))
        .sum();
    if idcg == 0.0 { 0.0 } else { dcg / idcg }
}
