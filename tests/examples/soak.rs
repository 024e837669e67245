//! `make soak`: the real server (release build) under a steady mixed load for a bounded time
//! (`QUARRY_SOAK_SECONDS`, default 600): searches (semantic and keyword) from three integrations,
//! document reads, file downloads, and files created, changed and deleted in the watched folder.
//! It stops by itself and fails unless: no answer was a 5xx, the server's memory (RSS) at the
//! end is within 10% of what it was after the first minute, and the 99th percentile of search
//! latency during the soak is within 3 times that of the same searches on the idle server.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quarry_tests::bench::{env_or, percentile_ms};
use quarry_tests::generated::english;
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::{Value, json};

/// Files in the watched folder at the start.
const FILES: usize = 2000;
/// Searches timed on the idle server.
const IDLE_SEARCHES: usize = 300;

/// What the load saw.
#[derive(Default)]
struct Tally {
    statuses: Vec<u16>,
    search_ms: Vec<Duration>,
}

fn main() {
    let seconds = env_or("QUARRY_SOAK_SECONDS", 600) as u64;
    let mut q = Quarry::new();
    let folder = q.scratch("watched");
    let mut rng = Rng(0x50a4);
    for i in 0..FILES {
        write(&folder, i, &english(&mut rng, 150));
    }
    q.add_folder("Watched", &folder);
    let keys: Vec<String> = (0..3)
        .map(|i| q.integration(&format!("Soak {i}"), "all", &["--quota", "unlimited"]))
        .collect();
    q.start();
    // The first sync embeds every file: a minute or two on 2 cores.
    let syncing = Instant::now();
    loop {
        let c = q.connectors().remove(0);
        if c["status"] == "idle" && c["doc_count"] == FILES {
            break;
        }
        assert!(
            syncing.elapsed() < Duration::from_secs(900),
            "the first sync did not end: {c}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    println!(
        "first sync of {FILES} files: {:.0} s",
        syncing.elapsed().as_secs_f64()
    );
    let pid = q.pid().expect("the server runs");
    let q = Arc::new(q);

    let queries: Vec<String> = (0..50).map(|_| english(&mut rng, 3)).collect();
    // Warm up first (the query model, each segment's vectors): the soak compares steady states.
    for (i, query) in queries.iter().enumerate() {
        search(&q, &keys[0], query, i % 2 == 0);
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut idle = Vec::with_capacity(IDLE_SEARCHES);
    for i in 0..IDLE_SEARCHES {
        let (status, took) = search(&q, &keys[0], &queries[i % queries.len()], i % 2 == 0);
        assert_eq!(status, 200, "idle searches are answered");
        idle.push(took);
        // One at a time, at a pace an agent keeps (and within an integration's rate).
        std::thread::sleep(Duration::from_millis(20));
    }
    let idle_p99 = percentile_ms(&idle, 0.99);
    println!(
        "idle: search p50 {:.1} ms, p99 {idle_p99:.1} ms",
        percentile_ms(&idle, 0.5)
    );

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let mut workers = Vec::new();
    // Searches: three clients, each about 6 a second.
    for (n, key) in keys.iter().enumerate() {
        let (q, stop, tally, key, queries) = (
            q.clone(),
            stop.clone(),
            tally.clone(),
            key.clone(),
            queries.clone(),
        );
        workers.push(std::thread::spawn(move || {
            let mut i = n;
            while !stop.load(Ordering::Relaxed) {
                let (status, took) = search(&q, &key, &queries[i % queries.len()], i % 2 == 0);
                let mut t = tally.lock().expect("tally");
                t.statuses.push(status);
                if status == 200 {
                    t.search_ms.push(took);
                }
                drop(t);
                i += 3;
                std::thread::sleep(Duration::from_millis(150));
            }
        }));
    }
    // Document reads and downloads of what searches find: about 4 and 2 a second.
    for (pause, file) in [(250, false), (500, true)] {
        let (q, stop, tally, key) = (q.clone(), stop.clone(), tally.clone(), keys[1].clone());
        let queries = queries.clone();
        workers.push(std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let hits = q.search(
                    &key,
                    json!({"query": queries[i % queries.len()], "semantic_search": false}),
                );
                let mut statuses = vec![hits.status];
                if let Some(hit) = hits.json()["results"].get(0).cloned() {
                    statuses.push(read(&q, &key, &hit, file));
                }
                tally.lock().expect("tally").statuses.extend(statuses);
                i += 1;
                std::thread::sleep(Duration::from_millis(pause));
            }
        }));
    }
    // Churn: about 5 files a second created, changed or deleted in the watched folder.
    {
        let (stop, folder) = (stop.clone(), folder.clone());
        workers.push(std::thread::spawn(move || {
            let mut rng = Rng(0xc4a2);
            let mut next = FILES;
            while !stop.load(Ordering::Relaxed) {
                match rng.below(3) {
                    0 => {
                        write(&folder, next, &english(&mut rng, 150));
                        next += 1;
                    }
                    1 => write(&folder, rng.below(next), &english(&mut rng, 150)),
                    _ => {
                        let _ = fs::remove_file(path_of(&folder, rng.below(next)));
                    }
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }));
    }

    let started = Instant::now();
    let mut rss_after_minute = None;
    let mut rss = 0;
    while started.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(5));
        rss = rss_kib(pid);
        if rss_after_minute.is_none() && started.elapsed() >= Duration::from_secs(60.min(seconds)) {
            rss_after_minute = Some(rss);
            println!("after the first minute: RSS {} MiB", rss / 1024);
        }
    }
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.join().expect("a load thread");
    }
    let tally = tally.lock().expect("tally");
    let five = tally.statuses.iter().filter(|&&s| s >= 500).count();
    let limited = tally.statuses.iter().filter(|&&s| s == 429).count();
    let soak_p99 = percentile_ms(&tally.search_ms, 0.99);
    let first = rss_after_minute.unwrap_or(rss);
    let growth = rss as f64 / first.max(1) as f64;
    let latency = soak_p99 / idle_p99.max(0.001);
    println!(
        "soak: {} s, {} requests ({five} 5xx, {limited} 429), search p50 {:.1} ms, p99 {soak_p99:.1} ms ({latency:.2}x idle), RSS {} MiB at the end vs {} MiB after the first minute ({growth:.3}x)",
        started.elapsed().as_secs(),
        tally.statuses.len(),
        percentile_ms(&tally.search_ms, 0.5),
        rss / 1024,
        first / 1024,
    );
    let mut failed = Vec::new();
    if five > 0 {
        failed.push(format!("{five} answers were 5xx"));
    }
    if growth > 1.10 {
        failed.push(format!("RSS grew {growth:.3}x after the first minute"));
    }
    if latency > 3.0 {
        failed.push(format!("search p99 was {latency:.2}x idle"));
    }
    assert!(failed.is_empty(), "soak failed: {}", failed.join("; "));
}

fn path_of(folder: &Path, n: usize) -> PathBuf {
    folder.join(format!("d{:02}/note-{n}.txt", n % 40))
}

fn write(folder: &Path, n: usize, text: &str) {
    let path = path_of(folder, n);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("mkdir");
    }
    fs::write(path, text).expect("write");
}

fn search(q: &Quarry, key: &str, query: &str, semantic: bool) -> (u16, Duration) {
    let started = Instant::now();
    let answer = q.search(
        key,
        json!({"query": query, "semantic_search": semantic, "limit": 10}),
    );
    (answer.status, started.elapsed())
}

/// Reads a hit's document (or downloads its file); the status (404 when churn removed it).
fn read(q: &Quarry, key: &str, hit: &Value, file: bool) -> u16 {
    let (Some(connector), Some(doc)) = (hit["connector_id"].as_str(), hit["doc_id"].as_str())
    else {
        return 0;
    };
    let suffix = if file { "/file" } else { "" };
    q.request(
        "GET",
        &format!("/api/v1/connectors/{connector}/docs/{doc}{suffix}"),
        Some(key),
        None,
    )
    .status
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
