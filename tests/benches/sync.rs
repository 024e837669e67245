//! Live sync through the real server and folder plugin, over generated folders: initial sync
//! throughput (from adding the connector to a running, warmed-up server until it is idle) and
//! peak memory beside a native walk-and-read of the same files (the floor), the time from a
//! file's save to its appearance in search, and search latency while the initial sync runs
//! beside the same searches when idle; then, on the synced folder, a full listing that finds
//! nothing changed and 1,000 edits scattered over the folder (the time until search finds all
//! of them), which must not grow with the folder's size.
//!
//! `make bench` runs it (release build). `QUARRY_BENCH_SYNC_FILES` sets the keyword-only folder
//! sizes (default `10000,100000`); `QUARRY_BENCH_SYNC_SEMANTIC` the size of the run with the
//! embedding model (default 2000; 0 skips it).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quarry_tests::bench::{MemoryPeaks, MemorySampler, env_or, peak_rss_mib, percentile_ms};
use quarry_tests::generated::{english, note_path, write_notes};
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::json;

/// Saves timed per run.
const SAVES: usize = 20;

/// Files edited at once, scattered over the folder.
const EDITS: usize = 1000;

fn main() {
    let sizes: Vec<usize> = std::env::var("QUARRY_BENCH_SYNC_FILES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let semantic = env_or("QUARRY_BENCH_SYNC_SEMANTIC", 2000);
    println!(
        "{:>8} {:>9} {:>10} {:>10} {:>8} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "files",
        "model",
        "sync s",
        "files/s",
        "vs floor",
        "peak MiB",
        "save p50",
        "save p99",
        "idle p99",
        "sync p99",
        "ratio"
    );
    let mut later = Vec::new();
    for &files in &sizes {
        later.push((files, run(files, false)));
    }
    if semantic > 0 && quarry_tests::model_dir().join("onnx/model.onnx").is_file() {
        run(semantic, true);
    }
    println!(
        "vs floor: sync throughput / a native walk that reads every file (no extraction, no index).\n\
         save: ms from a file's write to its first appearance in search. idle/sync p99: search ms\n\
         when idle and while the initial sync runs; ratio = sync p99 / idle p99.\n"
    );
    println!(
        "{:>8} {:>14} {:>14} {:>14} {:>14} {:>14}",
        "files", "no-change s", "1000 edits s", "peak MiB", "anon MiB", "mapped MiB"
    );
    for (files, l) in later {
        println!(
            "{files:>8} {:>14.1} {:>14.2} {:>14.0} {:>14.0} {:>14.0}",
            l.unchanged.as_secs_f64(),
            l.edits.as_secs_f64(),
            l.peak_mib,
            l.memory.anon_mib,
            l.memory.file_mib,
        );
    }
    println!(
        "no-change: a full listing (`connector sync --full --wait`) of the synced folder, nothing\n\
         changed. 1000 edits: from the first of {EDITS} scattered writes until search finds all of\n\
         them. peak MiB: the server's peak resident memory over the whole run (no model, VmHWM);\n\
         anon MiB: the peak of its anonymous memory (heap, stacks), sampled every 100 ms; mapped\n\
         MiB: the peak of its file-backed pages (the index's mapped files: page cache the kernel\n\
         reclaims under pressure)."
    );
}

/// What the run measured after the initial sync.
struct Later {
    unchanged: Duration,
    edits: Duration,
    peak_mib: f64,
    memory: MemoryPeaks,
}

fn run(files: usize, model: bool) -> Later {
    let mut q = Quarry::new();
    let dir = q.scratch("files");
    let mut rng = Rng(files as u64);
    write_notes(&dir, files, &mut rng);
    let floor = native_read(&dir);
    if !model {
        // The server and the CLI the bench polls alike.
        q.without_model();
    }
    let key = q.integration("Bench", "all", &["--quota", "unlimited"]);
    q.start();
    let sampler = MemorySampler::start(q.pid().expect("running"));
    // Warm-up, so neither series pays for a fresh process's first searches.
    let mut warm = 0;
    searches(&q, &key, model, || {
        warm += 1;
        warm <= 20
    });

    // The server starts the new connector's sync at its next look at the store (<= 0.5 s).
    let started = Instant::now();
    q.add_folder("Files", &dir);
    let q = Arc::new(q);
    let syncing = Arc::new(AtomicBool::new(true));
    let searcher = {
        let (q, key, syncing) = (q.clone(), key.clone(), syncing.clone());
        std::thread::spawn(move || searches(&q, &key, model, || syncing.load(Ordering::Relaxed)))
    };
    let deadline = started + Duration::from_secs(3600);
    loop {
        let c = q.connectors().remove(0);
        if c["status"] == "idle" && c["doc_count"] == files {
            break;
        }
        assert!(Instant::now() < deadline, "the sync did not finish: {c}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let sync_time = started.elapsed();
    syncing.store(false, Ordering::Relaxed);
    let during = searcher.join().expect("searcher");
    let peak = peak_rss_mib(q.pid().expect("running"));

    let mut count = 0;
    let idle = searches(&q, &key, model, || {
        count += 1;
        count <= during.len().clamp(100, 300)
    });
    let saves = saves(&q, &key, &dir);

    let per_second = files as f64 / sync_time.as_secs_f64();
    let floor_per_second = files as f64 / floor.as_secs_f64();
    let (idle_p99, during_p99) = (percentile_ms(&idle, 0.99), percentile_ms(&during, 0.99));
    println!(
        "{files:>8} {:>9} {:>10.1} {per_second:>10.0} {:>7.3}x {peak:>9.0} {:>9.0} {:>9.0} {idle_p99:>10.1} {during_p99:>10.1} {:>9.2}x",
        if model { "MiniLM" } else { "none" },
        sync_time.as_secs_f64(),
        per_second / floor_per_second,
        percentile_ms(&saves, 0.5),
        percentile_ms(&saves, 0.99),
        during_p99 / idle_p99,
    );
    let unchanged = unchanged_listing(&q);
    let edits = scattered_edits(&q, &key, &dir, files, &mut rng);
    Later {
        unchanged,
        edits,
        peak_mib: peak_rss_mib(q.pid().expect("running")),
        memory: sampler.finish(),
    }
}

/// A full listing of the synced folder, in which nothing changed.
fn unchanged_listing(q: &Quarry) -> Duration {
    let t = Instant::now();
    q.cli_ok(&["connector", "sync", "Files", "--full", "--wait"]);
    t.elapsed()
}

/// Rewrites [`EDITS`] files spread over the folder, each with a marker word; the time until
/// search finds every one.
fn scattered_edits(q: &Quarry, key: &str, dir: &Path, files: usize, rng: &mut Rng) -> Duration {
    let mut picked: Vec<usize> = (0..EDITS).map(|_| rng.below(files)).collect();
    picked.sort_unstable();
    picked.dedup();
    let t = Instant::now();
    for &i in &picked {
        std::fs::write(
            note_path(dir, i),
            format!("# Note {i}\n\nscatteredit {}\n", english(rng, 20)),
        )
        .expect("edit");
    }
    loop {
        let body = json!({"query": "scatteredit", "semantic_search": false, "limit": 1});
        if q.search(key, body).json()["total"] == picked.len() {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < Duration::from_secs(600),
            "the edits were never all found"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Reads every file of `dir` natively, as fast as one thread can: the floor of any sync.
fn native_read(dir: &Path) -> Duration {
    fn visit(dir: &Path, bytes: &mut usize) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map_while(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            if path.is_dir() {
                visit(&path, bytes);
            } else {
                *bytes += std::fs::read(&path).expect("read").len();
            }
        }
    }
    let started = Instant::now();
    let mut bytes = 0;
    visit(dir, &mut bytes);
    assert!(bytes > 0);
    started.elapsed()
}

/// Searches (keyword, and semantic with a model) every 20 ms while `go()` holds; their
/// latencies.
fn searches(q: &Quarry, key: &str, model: bool, mut go: impl FnMut() -> bool) -> Vec<Duration> {
    let queries = ["note", "market school", "\"the people\"", "water -city"];
    let mut times = Vec::new();
    let mut i = 0;
    while go() {
        let body = json!({
            "query": queries[i % queries.len()],
            "semantic_search": model && i % 2 == 1,
            "limit": 10,
        });
        let t = Instant::now();
        let response = q.search(key, body);
        times.push(t.elapsed());
        assert_eq!(response.status, 200, "{}", response.text());
        i += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    times
}

/// Writes new files one at a time and times each until search finds it.
fn saves(q: &Quarry, key: &str, dir: &Path) -> Vec<Duration> {
    let mut times = Vec::with_capacity(SAVES);
    for i in 0..SAVES {
        let word = format!("savedword{i}x");
        let path = dir.join(format!("f0000/saved{i}.md"));
        let t = Instant::now();
        std::fs::write(&path, format!("{word} written by the benchmark")).expect("write");
        loop {
            let body = json!({"query": word, "semantic_search": false});
            if q.search(key, body).json()["total"] == 1 {
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(120), "{word} never found");
            std::thread::sleep(Duration::from_millis(5));
        }
        times.push(t.elapsed());
        std::thread::sleep(Duration::from_millis(300));
    }
    times
}
