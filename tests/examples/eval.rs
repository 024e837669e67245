//! `make eval`: indexes each relevance collection of `../shared/eval` through the real pipeline
//! (the sync's chunking and embedding, the index's writer) and runs every judged query through
//! the search the API runs, in keyword, semantic and hybrid mode; prints nDCG@10 and Recall@100
//! beside the reference BM25 row. Queries are passed as plain words (see [`as_words`]).
//!
//! Then every ranking lever of [`Fusion`] alone against the ranking before them, and the
//! default now, on the four collections (`docs/embedding.md`, "Sharper ranking"); last the
//! team's index beside the embedded one: each collection's index copied through a team's index
//! log on PostgreSQL into a host's copy (`docs/team.md`), searched in the three modes.
//!
//! `cargo run --release -p quarry-tests --example eval -- [DIR]`. Indexes are kept under
//! `~/.cache/quarry/eval` per model, so later runs only search.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use quarry_core::team_log::LogChange;
use quarry_embed::Embedder;
use quarry_index::{
    Applied, Combine, Fusion, Passages, SearchIndex, TermFeedback, VectorFeedback, encode_record,
};
use quarry_store::Store;
use quarry_tests::postgres as pg;
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

/// The fused ranking before the levers were measured (issue 37).
const BEFORE: Fusion = Fusion::RANKS;

/// A lever is kept when it raises the mean and lowers no collection by more than this.
const MAX_LOSS: f64 = 0.005;

/// Rows measured against the default (a lever on top of it, or one taken off), not against
/// [`BEFORE`].
const DEFAULT_PLUS_RM3: &str = "the default + RM3 5 docs, 10 terms, 0.8";
const DEFAULT_WITHOUT_TIERS: &str = "the default, keyword side without tiers";

/// Each lever against [`BEFORE`]: one setting changed, then the kept ones together (the
/// settings around each were measured too; `docs/embedding.md` has the neighbours).
fn levers() -> Vec<(&'static str, Fusion)> {
    let rm3 = |docs, terms, original| {
        Some(TermFeedback {
            docs,
            terms,
            original,
        })
    };
    let vectors = |docs, weight| {
        Some(VectorFeedback {
            docs,
            weight,
            agreement: None,
        })
    };
    let agreed = |docs, weight, within| {
        Some(VectorFeedback {
            docs,
            weight,
            agreement: Some(within),
        })
    };
    let scores = |keyword| Fusion {
        combine: Combine::Scores,
        keyword,
        ..BEFORE
    };
    let bounded = |keyword| Fusion {
        combine: Combine::BoundedScores,
        keyword,
        ..BEFORE
    };
    vec![
        (
            "keyword side by BM25 alone (no tiers)",
            Fusion {
                tiers: false,
                ..BEFORE
            },
        ),
        (
            "title weight 0.5",
            Fusion {
                title: 0.5,
                ..BEFORE
            },
        ),
        (
            "title weight 1",
            Fusion {
                title: 1.0,
                ..BEFORE
            },
        ),
        (
            "passages: mean of the best 2",
            Fusion {
                passages: Passages::MeanOfBest(2),
                ..BEFORE
            },
        ),
        (
            "passages: best + 0.5 x second",
            Fusion {
                passages: Passages::BestAndSecond(0.5),
                ..BEFORE
            },
        ),
        ("scaled scores, keyword 0.8", scores(0.8)),
        ("scaled scores, keyword 0.5", scores(0.5)),
        ("scaled scores, keyword 0.4", scores(0.4)),
        ("bounded scores, keyword 0.8", bounded(0.8)),
        ("bounded scores, keyword 0.5", bounded(0.5)),
        (
            "RM3: 5 docs, 10 terms, query 0.8",
            Fusion {
                term_feedback: rm3(5, 10, 0.8),
                ..BEFORE
            },
        ),
        (
            "RM3: 10 docs, 10 terms, query 0.5",
            Fusion {
                term_feedback: rm3(10, 10, 0.5),
                ..BEFORE
            },
        ),
        (
            "RM3: 10 docs, 20 terms, query 0.7",
            Fusion {
                term_feedback: rm3(10, 20, 0.7),
                ..BEFORE
            },
        ),
        (
            "vector feedback: 3 docs, 0.3",
            Fusion {
                vector_feedback: vectors(3, 0.3),
                ..BEFORE
            },
        ),
        (
            "vector feedback: 3 docs, 0.5",
            Fusion {
                vector_feedback: vectors(3, 0.5),
                ..BEFORE
            },
        ),
        (
            "vector feedback: 5 docs, 0.5",
            Fusion {
                vector_feedback: vectors(5, 0.5),
                ..BEFORE
            },
        ),
        (
            "vector feedback: 10 docs, 1",
            Fusion {
                vector_feedback: vectors(10, 1.0),
                ..BEFORE
            },
        ),
        (
            "vector feedback: 3 docs, 0.5, within the first 20 of both",
            Fusion {
                vector_feedback: agreed(3, 0.5, 20),
                ..BEFORE
            },
        ),
        (
            "scaled 0.4 + vector feedback 3, 0.5, any document",
            Fusion {
                vector_feedback: vectors(3, 0.5),
                ..scores(0.4)
            },
        ),
        (
            "scaled 0.4 + vector feedback 3, 0.5, within the first 10 of both",
            Fusion {
                vector_feedback: agreed(3, 0.5, 10),
                ..scores(0.4)
            },
        ),
        (
            "scaled 0.4 + vector feedback 3, 0.5, within the first 100 of both",
            Fusion {
                vector_feedback: agreed(3, 0.5, 100),
                ..scores(0.4)
            },
        ),
        (
            "scaled 0.5 + vector feedback 3, 0.5, within 20",
            Fusion {
                vector_feedback: agreed(3, 0.5, 20),
                ..scores(0.5)
            },
        ),
        (
            "scaled 0.3 + vector feedback 3, 0.5, within 20",
            Fusion {
                vector_feedback: agreed(3, 0.5, 20),
                ..scores(0.3)
            },
        ),
        (
            "scaled 0.4 + vector feedback 2, 0.5, within 20",
            Fusion {
                vector_feedback: agreed(2, 0.5, 20),
                ..scores(0.4)
            },
        ),
        (
            "scaled 0.4 + vector feedback 3, 0.4, within 20",
            Fusion {
                vector_feedback: agreed(3, 0.4, 20),
                ..scores(0.4)
            },
        ),
        (
            "scaled 0.4 + vector feedback 3, 0.6, within 20",
            Fusion {
                vector_feedback: agreed(3, 0.6, 20),
                ..scores(0.4)
            },
        ),
        (
            "the default + RM3 5 docs, 10 terms, 0.8",
            Fusion {
                term_feedback: rm3(5, 10, 0.8),
                ..Fusion::HYBRID
            },
        ),
        (
            "the default, keyword side without tiers",
            Fusion {
                tiers: false,
                ..Fusion::HYBRID
            },
        ),
    ]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval"),
        PathBuf::from,
    );
    let embedder = Arc::new(relevance::embedder()?);
    let mut modes: Vec<(String, Option<Fusion>)> = vec![
        ("keyword".into(), None),
        ("semantic".into(), Some(Fusion::SEMANTIC_ONLY)),
        ("hybrid before".into(), Some(BEFORE)),
        ("hybrid".into(), Some(Fusion::HYBRID)),
    ];
    let levers = levers();
    modes.extend(
        levers
            .iter()
            .map(|(name, f)| ((*name).to_owned(), Some(*f))),
    );
    let mut rows = Vec::new();
    let mut team_rows = Vec::new();
    for (name, ref_ndcg, ref_recall) in REFERENCE {
        let collection = load(&dir.join(name))?;
        let index = relevance::build_index(&collection.name, &collection.docs, Some(&embedder))?;
        let started = Instant::now();
        let mut scores = Vec::new();
        for (_, fusion) in &modes {
            scores.push(evaluate(&collection, &index, &embedder, *fusion)?);
        }
        let copy_dir = tempfile::tempdir()?;
        let copy = team_copy(&index, copy_dir.path())?;
        let mut team = Vec::new();
        for mode in TEAM_MODES {
            team.push(evaluate(&collection, &copy, &embedder, modes[mode].1)?);
        }
        team_rows.push((name, TEAM_MODES.map(|mode| scores[mode]).to_vec(), team));
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
    let shown = 4;
    let header: Vec<&str> = modes.iter().take(shown).map(|(m, _)| m.as_str()).collect();
    println!("| collection | {} | BM25 reference |", header.join(" | "));
    println!("|---|{}---|", "---|".repeat(shown));
    for (name, scores, ref_ndcg, ref_recall) in &rows {
        let cells: Vec<String> = scores
            .iter()
            .take(shown)
            .map(|(n, r)| format!("{n:.3} / {r:.3}"))
            .collect();
        println!(
            "| {name} | {} | {ref_ndcg:.3} / {ref_recall:.3} |",
            cells.join(" | ")
        );
    }
    print_levers(&modes, &rows);
    print_team(&modes, &team_rows);
    Ok(())
}

/// The modes the team's index is measured in (indexes into the modes): keyword, semantic and
/// hybrid as the API runs them.
const TEAM_MODES: [usize; 3] = [0, 1, 3];

/// A collection's team row: its name, the embedded index's and the team copy's scores.
type TeamRow = (&'static str, Vec<(f64, f64)>, Vec<(f64, f64)>);

/// The team's index beside the embedded index, and the largest difference.
fn print_team(modes: &[(String, Option<Fusion>)], rows: &[TeamRow]) {
    println!(
        "\nthe team's index (a host's copy of the team's index log on PostgreSQL) beside the \
         embedded index, nDCG@10 / Recall@100\n"
    );
    let names: Vec<&str> = TEAM_MODES
        .iter()
        .map(|&mode| modes[mode].0.as_str())
        .collect();
    println!(
        "| collection | {} |",
        names
            .iter()
            .map(|m| format!("{m}, embedded | {m}, team"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---|".repeat(2 * TEAM_MODES.len()));
    let mut largest: f64 = 0.0;
    for (name, embedded, team) in rows {
        let cells: Vec<String> = embedded
            .iter()
            .zip(team)
            .map(|((en, er), (tn, tr))| {
                largest = largest.max((en - tn).abs()).max((er - tr).abs());
                format!("{en:.3} / {er:.3} | {tn:.3} / {tr:.3}")
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    println!("\nlargest difference, team against embedded: {largest:.4}");
}

/// A copy of `index` as a team host holds it: every document exported, appended to a team's
/// index log in a new database on the test PostgreSQL server, read back from the log and applied
/// to a new index in `dir`.
fn team_copy(index: &SearchIndex, dir: &Path) -> Result<SearchIndex, Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Runtime::new()?;
    let keys = tempfile::tempdir()?;
    let store = runtime.block_on(Store::open_postgres(
        &pg::shared().new_database(),
        keys.path(),
    ))?;
    let mut batch = Vec::new();
    for doc in index.export()? {
        let doc = doc?;
        batch.push(LogChange::Put {
            record: encode_record(&doc),
            connector: doc.info.connector,
            doc: doc.info.doc_id,
            over: None,
        });
        if batch.len() == 256 {
            runtime.block_on(store.append_to_team_index(std::mem::take(&mut batch)))?;
        }
    }
    runtime.block_on(store.append_to_team_index(batch))?;
    let team = runtime.block_on(store.database_id())?;
    let copy = SearchIndex::open(dir, true)?;
    let mut position = 0;
    loop {
        let entries = runtime.block_on(store.team_index_after(position, 32 << 20))?;
        let Some(last) = entries.last().map(|e| e.position) else {
            break;
        };
        position = last;
        copy.follow(
            false,
            entries,
            Applied {
                team: team.clone(),
                position,
            },
        )?;
    }
    runtime.block_on(store.close());
    Ok(copy)
}

/// A collection's row: its name, every mode's (nDCG@10, Recall@100), and the reference's.
type Row = (&'static str, Vec<(f64, f64)>, f64, f64);

/// Every lever's hybrid nDCG@10 against the ranking before them (mode 2; the rows on top of the
/// default against the default, mode 3), and whether it is kept: a higher mean and no
/// collection lower by more than [`MAX_LOSS`]; last the default against the ranking before.
fn print_levers(modes: &[(String, Option<Fusion>)], rows: &[Row]) {
    let names: Vec<&str> = rows.iter().map(|r| r.0).collect();
    println!(
        "\nhybrid nDCG@10 by lever, against \"hybrid before\" (\"the default ...\" rows against \
         the default; kept: a higher mean, none lower by more than {MAX_LOSS})\n"
    );
    println!(
        "| lever | {} | mean | change | worst | kept |",
        names.join(" | ")
    );
    println!("|---|{}---|---|---|---|", "---|".repeat(names.len()));
    let ndcg = |mode: usize| -> Vec<f64> { rows.iter().map(|r| r.1[mode].0).collect() };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut order: Vec<usize> = vec![2];
    order.extend(4..modes.len());
    order.push(3);
    for mode in order {
        let name = modes[mode].0.as_str();
        let against = match name {
            DEFAULT_PLUS_RM3 | DEFAULT_WITHOUT_TIERS => ndcg(3),
            _ => ndcg(2),
        };
        let values = ndcg(mode);
        let change = mean(&values) - mean(&against);
        let worst = values
            .iter()
            .zip(&against)
            .map(|(v, b)| v - b)
            .fold(f64::MAX, f64::min);
        let kept = match mode {
            2 => "",
            _ if change > 0.0 && worst >= -MAX_LOSS => "yes",
            _ => "no",
        };
        let cells: Vec<String> = values.iter().map(|v| format!("{v:.3}")).collect();
        let name = if mode == 3 {
            "**hybrid now (the default)**"
        } else {
            name
        };
        println!(
            "| {name} | {} | {:.3} | {change:+.3} | {worst:+.3} | {kept} |",
            cells.join(" | "),
            mean(&values)
        );
    }
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
