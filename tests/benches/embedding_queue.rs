//! The embedding queue beside its embedder, in one run on the same real documents (abstracts of
//! `../shared/eval`), counted in tokens:
//! - sentence-transformers on PyTorch, the same documents cut at 256 tokens, the best of batches
//!   8 and 16 (`quarry_tests::bench::sentence_transformers`);
//! - the embedder's own rate: every document's title and text embedded in one length-sorted
//!   pass, cut at the model's 256 tokens as sentence-transformers cuts it; where the default
//!   runs an int8 graph, the same pass on the fp32 graph beside it;
//! - the queue's rate: the same documents written to a real index without vectors, then
//!   `embed_all_pending` (rounds read back from the index, passages, commits) until none is
//!   pending, each token of a document counted once;
//! - where the difference goes: the documents' passages as the queue cuts them (windows overlap,
//!   the title goes before each passage), embedded all at once without the index;
//! - the real server (release build) on a folder of the same documents as text files (title,
//!   then text): the time from its start to every document keyword-searchable (the sync idle),
//!   then to no pending vectors (`GET /api/v1/connectors`), the rate over the latter.
//!
//! `QUARRY_BENCH_QUEUE_DOCS` sets how many documents (default 2,000). `make bench` runs it.

#[path = "common/embedder.rs"]
mod embedder;

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use quarry_core::{ConnectorId, DocId, DocMeta};
use quarry_embed::{EmbedConfig, Embedder, Graph, GraphChoice};
use quarry_index::{DocInfo, IndexDoc, SearchIndex, WriteBatch};
use quarry_tests::quarry::Quarry;
use serde_json::Value;
use tokenizers::Tokenizer;

fn main() {
    let (embedder, threads) = embedder::on_every_core();
    let mut tokenizer = Tokenizer::from_file(quarry_tests::model_dir().join("tokenizer.json"))
        .expect("the model's tokenizer loads");
    // Whole texts, unpadded: the cuts are the bench's to make.
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(None)
        .expect("no truncation is a valid setting");
    let count = |text: &str| {
        tokenizer
            .encode(text, true)
            .map_or(0, |encoding| encoding.get_ids().len())
    };
    let docs = real_docs(quarry_tests::bench::env_or("QUARRY_BENCH_QUEUE_DOCS", 2000));
    if docs.is_empty() {
        println!("embedding queue bench: skipped (no ../shared/eval)");
        return;
    }
    let whole: Vec<String> = docs
        .iter()
        .map(|d| format!("{}\n{}", d.info.meta.title, d.text))
        .collect();
    let once: usize = whole.iter().map(|t| count(t)).sum();
    let cut: usize = whole
        .iter()
        .map(|t| count(t).min(embedder.max_tokens()))
        .sum();
    println!(
        "embedding queue bench: {} documents, {once} tokens ({:.0} a document), model {}, {threads} threads\n",
        docs.len(),
        once as f64 / docs.len() as f64,
        embedder.id()
    );

    let refs: Vec<&str> = whole.iter().map(String::as_str).collect();
    embedder.embed_passages(&refs[..16]).expect("warm-up");
    let started = Instant::now();
    embedder.embed_passages(&refs).expect("embed");
    let own = cut as f64 / started.elapsed().as_secs_f64();
    let fp32 = (embedder.graph() != Graph::Fp32).then(|| {
        let fp32 = Embedder::load(&EmbedConfig {
            model_dir: quarry_tests::model_dir(),
            runtime_library: quarry_tests::ort_lib(),
            threads,
            graph: GraphChoice::Only(Graph::Fp32),
        })
        .expect("the fp32 graph loads");
        fp32.embed_passages(&refs[..16]).expect("warm-up");
        let started = Instant::now();
        fp32.embed_passages(&refs).expect("embed");
        cut as f64 / started.elapsed().as_secs_f64()
    });
    // The same texts through sentence-transformers, which cuts them at 256 tokens too.
    let torch = [8, 16]
        .into_iter()
        .filter_map(|batch| quarry_tests::bench::sentence_transformers(&whole, threads, batch))
        .map(|rate| rate.passages_per_s * cut as f64 / whole.len() as f64)
        .fold(None, |best: Option<f64>, rate| {
            Some(best.map_or(rate, |b| b.max(rate)))
        });

    let fed: usize = docs.iter().map(|d| passages_tokens(d, &count)).sum();
    let mut passages_docs = docs.clone();
    let started = Instant::now();
    quarry_sync::embed_docs(&embedder, &mut passages_docs).expect("embed");
    let passages = started.elapsed().as_secs_f64();

    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true).expect("index");
    for chunk in docs.chunks(500) {
        index
            .write(WriteBatch {
                upserts: chunk.to_vec(),
                ..WriteBatch::default()
            })
            .expect("write");
    }
    let started = Instant::now();
    quarry_sync::embed_all_pending(&index, &embedder, &[], &AtomicBool::new(false), |_, _| {})
        .expect("embed the pending documents");
    let queue = started.elapsed().as_secs_f64();

    let server = through_server(&whole);

    println!("tokens a second (each token of a document counted once by the queue's rows):");
    match torch {
        Some(rate) => println!(
            "  sentence-transformers, the same, batch 8/16 {rate:9.0}   (embedder / it {:.2}x)",
            own / rate
        ),
        None => println!("  sentence-transformers: skipped (run scripts/bench-venv.sh)"),
    }
    println!(
        "  the embedder, whole documents cut at 256    {own:9.0}   ({} graph)",
        embedder.graph()
    );
    if let Some(rate) = fp32 {
        println!(
            "  the same on the fp32 graph                  {rate:9.0}   ({} / fp32 {:.2}x)",
            embedder.graph(),
            own / rate
        );
    }
    println!(
        "  their passages, all at once, no index       {:9.0}   ({fed} tokens fed, {:.2}x the documents')",
        once as f64 / passages,
        fed as f64 / once as f64
    );
    println!(
        "  the queue (index to index)                  {:9.0}   ({queue:.1} s)",
        once as f64 / queue
    );
    println!(
        "  the server, keyword-searchable to no pending {:9.0}   (searchable after {:.1} s, every vector after {:.1} s: {:.0} from the start)",
        once as f64 / server.embedded,
        server.searchable,
        server.searchable + server.embedded,
        once as f64 / (server.searchable + server.embedded)
    );
    println!(
        "  ratio queue / embedder {:.2} (aim: >= 0.90); the server's / embedder {:.2}",
        once as f64 / queue / own,
        once as f64 / server.embedded / own
    );
    if let Some(rate) = torch {
        println!(
            "  ratio queue / sentence-transformers {:.2}; end to end, the server / sentence-transformers {:.2} (goal: at least 1.3)",
            once as f64 / queue / rate,
            once as f64 / server.embedded / rate
        );
    }
}

/// Tokens the model is fed for `doc`: each passage after its heading (title), as `embed_docs`
/// builds them.
fn passages_tokens(doc: &IndexDoc, count: &impl Fn(&str) -> usize) -> usize {
    let title = &doc.info.meta.title;
    let passages = quarry_embed::chunk(&doc.text, &doc.page_starts);
    if passages.is_empty() {
        return count(title);
    }
    passages
        .iter()
        .map(|p| count(&format!("{title}\n{}", &doc.text[p.start..p.end])).min(256))
        .sum()
}

/// Up to `limit` documents of the four collections, in turn.
fn real_docs(limit: usize) -> Vec<IndexDoc> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval");
    let mut docs = Vec::new();
    for collection in ["med", "cisi", "cacm", "cranfield"] {
        let Ok(text) = std::fs::read_to_string(root.join(collection).join("corpus.jsonl")) else {
            continue;
        };
        for line in text.lines() {
            if docs.len() >= limit {
                return docs;
            }
            let Ok(doc) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let body = doc["text"].as_str().unwrap_or_default().to_owned();
            let title = doc["title"].as_str().unwrap_or_default().to_owned();
            let id = format!("{collection}-{}", docs.len());
            docs.push(IndexDoc {
                info: DocInfo {
                    connector: ConnectorId::parse("cn_bench").expect("valid id"),
                    doc_id: DocId::parse(id.clone()).expect("valid id"),
                    meta: DocMeta {
                        title: if title.is_empty() { id } else { title },
                        path: None,
                        url: None,
                        mime_type: "text/plain".into(),
                        size_bytes: body.len() as u64,
                        update_time_ms: 1_735_689_600_000 + docs.len() as i64,
                    },
                },
                text: body,
                page_starts: Vec::new(),
                metadata: Vec::new(),
                embedding: None,
            });
        }
    }
    docs
}

/// The real server's times on a folder of `texts`, in seconds.
struct ServerTimes {
    /// From the start to every document keyword-searchable (the sync done).
    searchable: f64,
    /// From then to no pending vectors.
    embedded: f64,
}

/// Starts the server on a folder of `texts` (one file each) and times it: keyword-searchable,
/// then every vector computed. Polls `GET /api/v1/connectors`: every 50 ms for the short sync,
/// every 250 ms while the queue works, since each poll takes the embedding threads' cores for a
/// moment (at 50 ms the server embedded about 5% slower: docs/embedding.md).
fn through_server(texts: &[String]) -> ServerTimes {
    let mut q = Quarry::new();
    let folder = q.scratch("abstracts");
    std::fs::create_dir_all(&folder).expect("folder");
    for (i, text) in texts.iter().enumerate() {
        std::fs::write(folder.join(format!("{i:05}.txt")), text).expect("write a document");
    }
    q.add_folder("Abstracts", &folder);
    let key = q.integration("Bench", "all", &["--quota", "unlimited"]);
    let started = Instant::now();
    q.start();
    let connector = |q: &Quarry| -> Value {
        q.request("GET", "/api/v1/connectors", Some(&key), None)
            .json()["connectors"][0]
            .clone()
    };
    let wait = |q: &Quarry, every: Duration, done: &dyn Fn(&Value) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(3600);
        while !done(&connector(q)) {
            assert!(
                Instant::now() < deadline,
                "the server took over an hour: {}",
                q.log()
            );
            std::thread::sleep(every);
        }
    };
    wait(&q, Duration::from_millis(50), &|c| {
        c["status"] == "idle" && !c["last_sync_time"].is_null()
    });
    let searchable = started.elapsed().as_secs_f64();
    wait(&q, Duration::from_millis(250), &|c| {
        c["embedding"]["pending"].as_u64() == Some(0)
    });
    ServerTimes {
        searchable,
        embedded: started.elapsed().as_secs_f64() - searchable,
    }
}
