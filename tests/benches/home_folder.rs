//! A real home folder, as a new user meets Quarry: a large tree of source code (the crates in
//! `~/.cargo/registry/src`, or a generated tree of code files when that holds fewer than
//! `QUARRY_BENCH_HOME_MIN_FILES`) beside a person's prose: 2,000 abstracts of `../shared/eval`
//! as text files, each given the time of a random file of the tree (notes are not all newer
//! than code). The real server (release build) syncs both, one folder connector each (the
//! embedding queue's order does not look at connectors unless one is put first, so this is the
//! same queue as one folder holding both), and the bench prints:
//!
//! - **meaning sooner**: from every file keyword-searchable, the seconds until every abstract
//!   has its vectors, beside the seconds the embedder alone needs for those abstracts' passages
//!   in this run (goal: at most 1.3x); the same under the order before (`QUARRY_BENCH_ORDER_BASELINE`:
//!   a `quarry` binary of the revision before, which `make bench` builds once), which is given
//!   `QUARRY_BENCH_ORDER_LIMIT` seconds at most (default 1,800) and reports how many abstracts
//!   had their vectors by then;
//! - **a lighter first sync**: the peak resident memory (`VmHWM`) and the time of a first
//!   keyword sync of the tree and the abstracts (no model), beside Recoll's `recollindex` (Debian
//!   `recollcmd`) indexing the same folders in the same run (goal: at most 1.0x).
//!
//! `QUARRY_BENCH_HOME_TREE` names another tree; `QUARRY_BENCH_HOME_ABSTRACTS` how many abstracts
//! (default 2,000); `QUARRY_BENCH_HOME_PARTS` which parts run (`memory,order`, the default).

#[path = "common/embedder.rs"]
mod embedder;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use quarry_tests::bench::{MemorySampler, env_or, peak_rss_mib, status_mib};
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::Value;

/// How often the bench looks at the server while it embeds (each look costs it a little).
const POLL: Duration = Duration::from_millis(250);

fn main() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let tree = source_tree(scratch.path());
    let files = count_files(&tree);
    let abstracts = abstracts(env_or("QUARRY_BENCH_HOME_ABSTRACTS", 2000));
    if abstracts.is_empty() {
        println!("home folder bench: skipped (no ../shared/eval)");
        return;
    }
    let notes = scratch.path().join("notes");
    write_abstracts(&notes, &abstracts, &tree);
    println!(
        "home folder bench: {} ({files} files) and {} abstracts\n",
        tree.display(),
        abstracts.len()
    );
    let parts = std::env::var("QUARRY_BENCH_HOME_PARTS").unwrap_or_else(|_| "memory,order".into());
    if parts.split(',').any(|p| p == "memory") {
        first_sync_memory(&tree, &notes);
    }
    if parts.split(',').any(|p| p == "order") {
        meaning_sooner(&tree, &notes, &abstracts);
    }
}

/// The crate sources of this machine, or a generated tree of code when they are few.
fn source_tree(scratch: &Path) -> PathBuf {
    let registry = std::env::var_os("QUARRY_BENCH_HOME_TREE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/registry/src")))
        .filter(|p| p.is_dir());
    let wanted = env_or("QUARRY_BENCH_HOME_MIN_FILES", 20_000);
    if let Some(tree) = registry.filter(|t| count_files(t) >= wanted) {
        return tree;
    }
    let tree = scratch.join("generated-code");
    let words = quarry_tests::generated::vocabulary(5000);
    let mut rng = Rng(11);
    for n in 0..wanted {
        let dir = tree.join(format!("crate-{:03}/src", n / 100));
        std::fs::create_dir_all(&dir).expect("a folder");
        let body = quarry_tests::generated::text(&mut rng, &words, 400);
        let code: String = body
            .split(' ')
            .collect::<Vec<_>>()
            .chunks(8)
            .map(|line| format!("    let {} = {};\n", line[0], line[1..].join(" + ")))
            .collect();
        std::fs::write(
            dir.join(format!("m{n}.rs")),
            format!("fn f() {{\n{code}}}\n"),
        )
        .expect("a file");
    }
    tree
}

fn count_files(dir: &Path) -> usize {
    walk(dir).len()
}

/// Every regular file under `dir` (links not followed).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() => out.push(entry.path()),
                _ => {}
            }
        }
    }
    out
}

/// An abstract: its title and text.
struct Abstract {
    title: String,
    text: String,
}

/// Up to `limit` abstracts of the four collections, in turn.
fn abstracts(limit: usize) -> Vec<Abstract> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval");
    let mut out = Vec::new();
    for collection in ["med", "cisi", "cacm", "cranfield"] {
        let Ok(text) = std::fs::read_to_string(root.join(collection).join("corpus.jsonl")) else {
            continue;
        };
        for line in text.lines().take(limit.saturating_sub(out.len())) {
            let Ok(doc) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let text = doc["text"].as_str().unwrap_or_default().to_owned();
            if text.split_whitespace().count() < 20 {
                continue;
            }
            out.push(Abstract {
                title: doc["title"].as_str().unwrap_or_default().to_owned(),
                text,
            });
        }
    }
    out
}

/// Writes each abstract as a text file (its title, then its text) into `dir`, each with the
/// modification time of a file of `tree` drawn at random.
fn write_abstracts(dir: &Path, abstracts: &[Abstract], tree: &Path) {
    std::fs::create_dir_all(dir).expect("notes folder");
    let times: Vec<SystemTime> = walk(tree)
        .iter()
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .collect();
    let mut rng = Rng(29);
    for (n, a) in abstracts.iter().enumerate() {
        let path = dir.join(format!("note-{n:05}.txt"));
        std::fs::write(&path, format!("{}\n\n{}\n", a.title, a.text)).expect("an abstract");
        if !times.is_empty() {
            let time = times[rng.below(times.len())];
            std::fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(time))
                .expect("set the time");
        }
    }
}

/// A server on both folders, started with `env`, its integration key.
fn server(
    tree: &Path,
    notes: &Path,
    binary: Option<&Path>,
    env: &[(&str, &str)],
) -> (Quarry, String) {
    let mut q = Quarry::new();
    if let Some(binary) = binary {
        q.use_binary(binary.to_path_buf());
    }
    q.add_folder("Sources", tree);
    q.add_folder("Notes", notes);
    let key = q.integration("Bench", "all", &["--quota", "unlimited"]);
    q.start_with_env(env);
    (q, key)
}

/// Both connectors as `GET /connectors` lists them, by name.
fn connectors(q: &Quarry, key: &str) -> Vec<Value> {
    q.request("GET", "/api/v1/connectors", Some(key), None)
        .json()["connectors"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn named<'a>(cs: &'a [Value], name: &str) -> Option<&'a Value> {
    cs.iter().find(|c| c["name"] == name)
}

/// Waits until both connectors have synced once and are idle; the seconds since `started`.
fn keyword_ready(q: &Quarry, key: &str, started: Instant) -> f64 {
    let deadline = started + Duration::from_secs(3 * 3600);
    loop {
        let cs = connectors(q, key);
        if cs.len() == 2
            && cs
                .iter()
                .all(|c| c["status"] == "idle" && !c["last_sync_time"].is_null())
        {
            return started.elapsed().as_secs_f64();
        }
        assert!(
            Instant::now() < deadline,
            "no first sync in 3 hours: {}",
            q.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Peak memory and time of a first keyword sync of both folders, Quarry beside Recoll.
fn first_sync_memory(tree: &Path, notes: &Path) {
    println!("a first keyword sync (no model), peak resident memory (VmHWM) and time:");
    let started = Instant::now();
    let (mut q, key) = server(tree, notes, None, &[("QUARRY_MODEL_DIR", "none")]);
    let pid = q.pid().expect("the server runs");
    let sampler = MemorySampler::start(pid);
    let took = keyword_ready(&q, &key, started);
    let quarry_peak = peak_rss_mib(pid);
    let kinds = sampler.finish();
    let docs: u64 = connectors(&q, &key)
        .iter()
        .map(|c| c["doc_count"].as_u64().unwrap_or(0))
        .sum();
    q.stop();
    println!(
        "  quarry   {quarry_peak:7.0} MiB  {took:7.1} s  ({docs} documents; peaks: {:.0} MiB anonymous, {:.0} MiB of mapped files)",
        kinds.anon_mib, kinds.file_mib
    );
    match recoll(tree, notes) {
        Some((peak, secs)) => {
            println!("  recoll   {peak:7.0} MiB  {secs:7.1} s");
            println!(
                "  quarry / recoll: memory {:.2}x (goal: at most 1.0x), speed {:.1}x\n",
                quarry_peak / peak,
                secs / took
            );
        }
        None => println!("  recoll: skipped (install Debian's recollcmd: make setup)\n"),
    }
}

/// `recollindex` over both folders with a fresh configuration: its peak resident memory (MiB,
/// sampled every 50 ms) and its time; `None` without Recoll.
fn recoll(tree: &Path, notes: &Path) -> Option<(f64, f64)> {
    let conf = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        conf.path().join("recoll.conf"),
        format!(
            "topdirs = {} {}\nidxflushmb = 50\n",
            tree.display(),
            notes.display()
        ),
    )
    .expect("recoll.conf");
    let started = Instant::now();
    let mut child = Command::new("recollindex")
        .arg("-c")
        .arg(conf.path())
        .arg("-z")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let mut peak: f64 = 0.0;
    loop {
        if let Some(hwm) = status_mib(child.id(), "VmHWM:") {
            peak = peak.max(hwm);
        }
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some((peak, started.elapsed().as_secs_f64()))
}

/// From keyword-searchable to every abstract's vectors, today's order and the one before,
/// beside the embedder alone on the same abstracts.
fn meaning_sooner(tree: &Path, notes: &Path, abstracts: &[Abstract]) {
    let alone = embedder_alone(abstracts);
    println!(
        "from every file keyword-searchable to every abstract's vectors (the embedder alone: {alone:.1} s):"
    );
    let today = until_abstracts(tree, notes, None, f64::INFINITY);
    println!("  today's order  {}", today.line(alone, abstracts.len()));
    let Some(baseline) = std::env::var_os("QUARRY_BENCH_ORDER_BASELINE").map(PathBuf::from) else {
        println!("  the order before: skipped (QUARRY_BENCH_ORDER_BASELINE names its binary)");
        return;
    };
    let limit = env_or("QUARRY_BENCH_ORDER_LIMIT", 1800) as f64;
    let before = until_abstracts(tree, notes, Some(&baseline), limit);
    println!("  the order before {}", before.line(alone, abstracts.len()));
}

/// Seconds the embedder alone takes for the abstracts' passages, cut as the queue cuts them.
fn embedder_alone(abstracts: &[Abstract]) -> f64 {
    let (embedder, _) = embedder::on_every_core();
    let mut docs: Vec<quarry_index::IndexDoc> = abstracts
        .iter()
        .enumerate()
        .map(|(n, a)| quarry_index::IndexDoc {
            info: quarry_index::DocInfo {
                connector: quarry_core::ConnectorId::parse("cn_bench").expect("id"),
                doc_id: quarry_core::DocId::parse(format!("n{n}")).expect("id"),
                meta: quarry_core::DocMeta {
                    title: format!("note-{n:05}.txt"),
                    path: Some(format!("note-{n:05}.txt")),
                    url: None,
                    mime_type: "text/plain".into(),
                    size_bytes: 0,
                    update_time_ms: 0,
                },
            },
            text: format!("{}\n\n{}\n", a.title, a.text),
            page_starts: Vec::new(),
            metadata: Vec::new(),
            embedding: None,
        })
        .collect();
    let started = Instant::now();
    quarry_sync::embed_docs(&embedder, &mut docs).expect("embeds");
    started.elapsed().as_secs_f64()
}

/// How one build did: seconds from keyword-searchable to the abstracts' vectors, or how many
/// it had when the limit came.
struct Outcome {
    ready: f64,
    after: f64,
    done: bool,
    embedded: u64,
}

impl Outcome {
    fn line(&self, alone: f64, abstracts: usize) -> String {
        match self.done {
            true => format!(
                "{:8.1} s  ({:.2}x the embedder alone; goal: at most 1.3x; keyword-searchable after {:.1} s)",
                self.after,
                self.after / alone,
                self.ready
            ),
            false => format!(
                "{} of {abstracts} abstracts after {:.0} s ({:.1}x the embedder alone; stopped there, the rest waiting behind other files)",
                self.embedded,
                self.after,
                self.after / alone
            ),
        }
    }
}

/// Runs a server (`binary`, or today's) with the model on both folders until every abstract
/// has its vectors, or `limit` seconds after keyword-searchable.
fn until_abstracts(tree: &Path, notes: &Path, binary: Option<&Path>, limit: f64) -> Outcome {
    let started = Instant::now();
    let (mut q, key) = server(tree, notes, binary, &[]);
    let ready = keyword_ready(&q, &key, started);
    let from = Instant::now();
    let total = count_files(notes) as u64;
    loop {
        let cs = connectors(&q, &key);
        let pending = named(&cs, "Notes").and_then(|c| c["embedding"]["pending"].as_u64());
        let after = from.elapsed().as_secs_f64();
        if pending == Some(0) || after >= limit {
            q.stop();
            return Outcome {
                ready,
                after,
                done: pending == Some(0),
                embedded: total - pending.unwrap_or(total).min(total),
            };
        }
        std::thread::sleep(POLL);
    }
}
