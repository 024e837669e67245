//! Semantic search costs, each beside a baseline measured in the same run:
//! - resident memory with the model loaded;
//! - embedding throughput on real passages (abstracts of `../shared/eval/med`, cut as the sync
//!   cuts them) beside sentence-transformers on PyTorch embedding the same passages with the
//!   same model and threads (`tests/bench/st_embed.py`, in the bench-only virtualenv
//!   `scripts/bench-venv.sh` installs), and the lowest cosine between a passage's vector alone
//!   and in a batch;
//! - embedding throughput: passages/s of 100-token passages as the sync embeds them (batches of
//!   16, length-sorted), beside the same engine at batch 64;
//! - indexing throughput with embeddings beside the same documents without;
//! - semantic and hybrid latency (query embedding included: every query is new; hybrid as
//!   the API runs it, `2 passes` with its second pass on every query, and `ranks`, the
//!   one-pass fusion before it) beside keyword latency, at 10,000 and 100,000 passages.
//!
//! Passage vectors for the latency corpora are random unit vectors (an exact scan costs the
//! same whatever the values); queries are embedded by the real model. `make bench` runs it.

#[path = "common/embedder.rs"]
mod embedder;

use std::time::{Duration, Instant};

use quarry_core::{ConnectorId, DocId, DocMeta};
use quarry_embed::Embedder;
use quarry_index::{
    DocInfo, Embedding, Fusion, IndexDoc, Ranking, SearchIndex, SearchRequest, SemanticQuery,
    VectorFeedback, WriteBatch,
};
use quarry_tests::generated::{english, text, vocabulary};
use quarry_tests::rng::Rng;

const PASSAGES_PER_DOC: usize = 4;
const WORDS_PER_PASSAGE: usize = 75;

fn main() {
    let before = quarry_tests::bench::status_mib(std::process::id(), "VmRSS:").unwrap_or(0.0);
    let (embedder, threads) = embedder::on_every_core();
    let loaded = quarry_tests::bench::status_mib(std::process::id(), "VmRSS:").unwrap_or(0.0);
    let words = vocabulary(5000);
    let mut rng = Rng(7);
    println!(
        "semantic bench: model {}, {threads} threads\n",
        embedder.id()
    );

    println!(
        "resident memory: {:.0} MiB with the model loaded ({:.0} MiB before loading it)\n",
        loaded, before
    );
    // 1. Embedding throughput: real passages beside PyTorch, then batch shapes.
    beside_pytorch(&embedder, threads);
    // 98 one-token words, with the two special tokens: 100 tokens.
    let passages: Vec<String> = (0..256).map(|_| english(&mut rng, 98)).collect();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    embedder.embed_passages(&refs[..16]).expect("warm-up");
    let ours = rate(refs.len(), || {
        embedder.embed_passages(&refs).expect("embed");
    });
    let batch64 = rate(refs.len(), || {
        for batch in refs.chunks(64) {
            embedder.embed_batch(batch).expect("embed");
        }
    });
    println!("embedding, 100-token passages:");
    println!("  ours (batch 16, length-sorted)   {ours:8.1} passages/s");
    println!("  same engine, batch 64             {batch64:8.1} passages/s");
    println!("  ratio {:.2}x\n", ours / batch64);

    // 2. Indexing with and without embeddings.
    let docs: Vec<IndexDoc> = (0..400)
        .map(|i| generated_doc(&mut rng, &words, i))
        .collect();
    let plain = index_rate(&docs, None);
    let embedded = index_rate(&docs, Some(&embedder));
    println!(
        "indexing {} documents of {PASSAGES_PER_DOC} passages:",
        docs.len()
    );
    println!("  without embeddings  {plain:8.1} documents/s");
    println!("  with embeddings     {embedded:8.1} documents/s");
    println!("  ratio {:.4}x\n", embedded / plain);

    // 3. Latency at 10k and 100k passages.
    println!(
        "{:>9} {:>9} {:>9} {:>9}   (ms; query embedding included, every query new)",
        "passages", "mode", "p50", "p99"
    );
    for passages in [10_000usize, 100_000] {
        latency(&embedder, &words, &mut rng, passages);
    }
}

/// Passages of real abstracts (the `med` collection), cut as the sync cuts documents.
fn real_passages(limit: usize) -> Option<Vec<String>> {
    let corpus = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/eval/med/corpus.jsonl");
    let text = std::fs::read_to_string(corpus).ok()?;
    let mut passages = Vec::new();
    for line in text.lines() {
        let doc: serde_json::Value = serde_json::from_str(line).ok()?;
        let body = doc["text"].as_str().unwrap_or_default();
        passages.extend(
            quarry_embed::chunk(body, &[])
                .into_iter()
                .map(|p| body[p.start..p.end].to_owned()),
        );
        if passages.len() >= limit {
            break;
        }
    }
    passages.truncate(limit);
    Some(passages)
}

/// Quarry's embedding of real passages beside sentence-transformers' (PyTorch, fp32) on the
/// same passages, model and threads, at its batch sizes 16 (Quarry's) and 32 (its default).
fn beside_pytorch(embedder: &Embedder, threads: usize) {
    let Some(passages) = real_passages(600) else {
        println!("embedding beside PyTorch: skipped (no ../shared/eval/med)\n");
        return;
    };
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    embedder.embed_passages(&refs[..16]).expect("warm-up");
    let ours = rate(refs.len(), || {
        embedder.embed_passages(&refs).expect("embed");
    });
    let words = passages
        .iter()
        .map(|p| p.split_whitespace().count())
        .sum::<usize>() as f64
        / passages.len() as f64;
    println!(
        "embedding {} real passages (med abstracts, {words:.0} words each on average), {threads} threads:",
        passages.len()
    );
    println!(
        "  ours (ONNX Runtime, {}, batch 16)  {ours:8.1} passages/s",
        embedder.id()
    );
    consistency(embedder, &refs[..CONSISTENCY_PASSAGES.min(refs.len())]);
    let mut best = 0.0f64;
    for batch in [8, 16, 32] {
        let Some(theirs) = quarry_tests::bench::sentence_transformers(&passages, threads, batch)
        else {
            println!(
                "  sentence-transformers: skipped (run scripts/bench-venv.sh; `make bench` does)\n"
            );
            return;
        };
        best = best.max(theirs.passages_per_s);
        println!(
            "  sentence-transformers {} (torch {}, fp32, batch {batch})  {:8.1} passages/s",
            theirs.sentence_transformers, theirs.torch, theirs.passages_per_s
        );
    }
    println!(
        "  ratio ours / best of PyTorch {:.2}x (aim: >= 1)\n",
        ours / best
    );
}

/// Real passages embedded alone and in batches, for [`consistency`].
const CONSISTENCY_PASSAGES: usize = 200;

/// Each of `passages` embedded alone against the same in the length-sorted batches of 16
/// (mixed lengths, padded): the lowest cosine between the two, which is 1 when a text's vector
/// does not depend on its batch.
fn consistency(embedder: &Embedder, passages: &[&str]) {
    let batched = embedder.embed_passages(passages).expect("embed");
    let lowest = passages
        .iter()
        .zip(&batched)
        .map(|(passage, in_batch)| {
            let alone = embedder.embed_passages(&[passage]).expect("embed");
            alone[0]
                .iter()
                .zip(in_batch)
                .map(|(a, b)| a * b)
                .sum::<f32>()
        })
        .fold(f32::MAX, f32::min);
    println!(
        "  {} passages alone and in batches of 16: lowest cosine {lowest:.6} (aim: 1, float tolerance)",
        passages.len()
    );
}

/// Items per second of `run` over `items`, best of three.
fn rate(items: usize, mut run: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let started = Instant::now();
            run();
            items as f64 / started.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

fn connector() -> ConnectorId {
    ConnectorId::parse("cn_bench").expect("valid id")
}

fn generated_doc(rng: &mut Rng, words: &[String], i: usize) -> IndexDoc {
    let paragraphs: Vec<String> = (0..PASSAGES_PER_DOC)
        .map(|_| text(rng, words, WORDS_PER_PASSAGE))
        .collect();
    let body = paragraphs.join("\n\n");
    IndexDoc {
        info: DocInfo {
            connector: connector(),
            doc_id: DocId::parse(format!("d{i}")).expect("valid id"),
            meta: DocMeta {
                title: text(rng, words, 4),
                path: None,
                url: None,
                mime_type: "text/plain".into(),
                size_bytes: body.len() as u64,
                update_time_ms: 1_735_689_600_000 + i as i64,
            },
        },
        text: body,
        page_starts: Vec::new(),
        metadata: Vec::new(),
        embedding: None,
    }
}

/// Documents per second through the sync's embedding step (when given a model) and the writer.
fn index_rate(docs: &[IndexDoc], embedder: Option<&Embedder>) -> f64 {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true).expect("index");
    rate(docs.len(), || {
        for chunk in docs.chunks(100) {
            let mut upserts = chunk.to_vec();
            if let Some(embedder) = embedder {
                quarry_sync::embed_docs(embedder, &mut upserts).expect("embed");
            }
            index
                .write(WriteBatch {
                    upserts,
                    ..WriteBatch::default()
                })
                .expect("write");
        }
    })
}

fn unit_vector(rng: &mut Rng, dims: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..dims)
        .map(|_| (rng.next_u64() % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn latency(embedder: &Embedder, words: &[String], rng: &mut Rng, passages: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true).expect("index");
    let docs = passages / PASSAGES_PER_DOC;
    for start in (0..docs).step_by(2000) {
        let upserts = (start..(start + 2000).min(docs))
            .map(|i| {
                let mut doc = generated_doc(rng, words, i);
                let ranges = passage_ranges(&doc.text);
                let vectors: Vec<Vec<f32>> = ranges
                    .iter()
                    .map(|_| unit_vector(rng, embedder.dims()))
                    .collect();
                doc.embedding = Some(Embedding::new(embedder.id(), ranges, &vectors));
                doc
            })
            .collect();
        index
            .write(WriteBatch {
                upserts,
                ..WriteBatch::default()
            })
            .expect("write");
    }
    let query_times: Vec<Duration> = (0..200)
        .map(|_| {
            let length = 2 + rng.below(6);
            let query = english(rng, length);
            let started = Instant::now();
            std::hint::black_box(
                embedder
                    .embed_query(&format!("{query} {}", rng.next_u64()))
                    .expect("embed"),
            );
            started.elapsed()
        })
        .collect();
    let (p50, p99) = percentiles(query_times);
    println!("{passages:>9} {:>9} {p50:>9.2} {p99:>9.2}", "embedding");
    // With random vectors the two rankings rarely agree, so the default's second pass seldom
    // runs here: `2 passes` makes it run on every query (feedback from any best document).
    let always_twice = Fusion::HYBRID
        .vector_feedback
        .map(|feedback| VectorFeedback {
            agreement: None,
            ..feedback
        });
    let modes: [(&str, Option<Fusion>); 5] = [
        ("keyword", None),
        ("semantic", Some(Fusion::SEMANTIC_ONLY)),
        ("ranks", Some(Fusion::RANKS)),
        ("hybrid", Some(Fusion::HYBRID)),
        (
            "2 passes",
            Some(Fusion {
                vector_feedback: always_twice,
                ..Fusion::HYBRID
            }),
        ),
    ];
    // Load each segment's vectors once, as a running server has.
    let mut warm = SearchRequest::new("warm", vec![connector()], 10);
    warm.ranking = Ranking::Fused(
        SemanticQuery {
            model: embedder.id().to_owned(),
            vector: embedder.embed_query("warm").expect("embed"),
        },
        Fusion::HYBRID,
    );
    index.search(&warm).expect("search");
    for (mode, fusion) in modes {
        let times: Vec<Duration> = (0..200)
            .map(|_| {
                // English words, and a number that makes every query new to the cache.
                let length = 2 + rng.below(6);
                let query = format!("{} {}", english(rng, length), rng.next_u64());
                let started = Instant::now();
                let mut request = SearchRequest::new(query.clone(), vec![connector()], 10);
                if let Some(fusion) = fusion {
                    request.ranking = Ranking::Fused(
                        SemanticQuery {
                            model: embedder.id().to_owned(),
                            vector: embedder.embed_query(&query).expect("embed"),
                        },
                        fusion,
                    );
                }
                std::hint::black_box(index.search(&request).expect("search"));
                started.elapsed()
            })
            .collect();
        let (p50, p99) = percentiles(times);
        println!("{passages:>9} {mode:>9} {p50:>9.2} {p99:>9.2}");
    }
    println!(
        "{passages:>9} vectors in memory: {:.1} MB",
        index.vector_memory() as f64 / 1e6
    );
}

/// p50 and p99 of `times`, in milliseconds.
fn percentiles(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    (at(0.50), at(0.99))
}

/// The byte ranges of the blank-line separated paragraphs of a generated text.
fn passage_ranges(text: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut start = 0usize;
    for part in text.split("\n\n") {
        let end = start + part.len();
        out.push((start as u32, end as u32));
        start = end + 2;
    }
    out
}
