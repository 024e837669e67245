//! A team deployment beside one embedded host, through the real servers: the same generated
//! folder indexed by one `quarry serve` on its data folder, and by three hosts on one
//! PostgreSQL database (the folder's host indexes, the team's index log carries the documents
//! to every host's copy); then the time from a file's save to its appearance in search (on the
//! team, on a host that did not sync it), and searches under load from concurrent clients
//! (spread over the three hosts for the team).
//!
//! `make bench` runs it (release build). `QUARRY_BENCH_TEAM_FILES` sets the folder's size
//! (default 20000), `QUARRY_BENCH_TEAM_CLIENTS` the concurrent clients (default 12; the bounds
//! on one integration's requests at once and per second are lifted),
//! `QUARRY_BENCH_TEAM_SEARCHES` the searches each client runs (default 200).

use std::path::Path;
use std::time::{Duration, Instant};

use quarry_tests::bench::{env_or, percentile_ms};
use quarry_tests::generated::write_notes;
use quarry_tests::postgres as pg;
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::json;

/// Saves timed per setup.
const SAVES: usize = 20;

/// The clients share one integration's key: its bounds on requests at once and per second are
/// lifted (the bench measures latency, not those bounds).
const UNBOUNDED: [(&str, &str); 2] = [
    ("QUARRY_IN_FLIGHT_LIMIT", "64"),
    ("QUARRY_RATE_LIMIT", "100000"),
];

/// What one setup measured.
struct Measured {
    index_s: f64,
    saves: Vec<Duration>,
    searches: Vec<Duration>,
    load_s: f64,
}

fn main() {
    let files = env_or("QUARRY_BENCH_TEAM_FILES", 20_000);
    let clients = env_or("QUARRY_BENCH_TEAM_CLIENTS", 12);
    let each = env_or("QUARRY_BENCH_TEAM_SEARCHES", 200);
    let source = tempfile::tempdir().expect("temp dir");
    write_notes(source.path(), files, &mut Rng(7));

    let embedded = embedded(source.path(), files, clients, each);
    let team = team(source.path(), files, clients, each);

    println!(
        "{:<18} {:>7} {:>9} {:>8} {:>9} {:>9} {:>8} {:>11} {:>8} {:>8}",
        "setup",
        "files",
        "index s",
        "files/s",
        "save p50",
        "save p95",
        "clients",
        "searches/s",
        "p50 ms",
        "p95 ms"
    );
    for (name, m) in [("embedded, 1 host", &embedded), ("team, 3 hosts", &team)] {
        println!(
            "{name:<18} {files:>7} {:>9.1} {:>8.0} {:>9.0} {:>9.0} {clients:>8} {:>11.0} {:>8.1} {:>8.1}",
            m.index_s,
            files as f64 / m.index_s,
            percentile_ms(&m.saves, 0.5),
            percentile_ms(&m.saves, 0.95),
            m.searches.len() as f64 / m.load_s,
            percentile_ms(&m.searches, 0.5),
            percentile_ms(&m.searches, 0.95),
        );
    }
    let ratio = |f: fn(&Measured) -> f64| f(&team) / f(&embedded);
    println!(
        "team / embedded: files/s {:.2}x, save p50 {:.2}x, searches/s {:.2}x, search p50 {:.2}x, p95 {:.2}x",
        ratio(|m| 1.0 / m.index_s),
        ratio(|m| percentile_ms(&m.saves, 0.5)),
        ratio(|m| m.searches.len() as f64 / m.load_s),
        ratio(|m| percentile_ms(&m.searches, 0.5)),
        ratio(|m| percentile_ms(&m.searches, 0.95)),
    );
    println!(
        "index s: from adding the folder to a running server until every host's search finds all\n\
         its files. save: ms from a file's write to its first appearance in search (the team: on\n\
         a host that did not sync it). Searches: keyword, 10 results, the clients at once (the\n\
         team: spread over the three hosts). One machine runs every host and PostgreSQL here, so\n\
         the team shares the same cores three ways; on three machines each host has its own.\n"
    );
}

/// A folder of `files` notes, copied from `source` into `q`'s scratch space.
fn folder(q: &Quarry, source: &Path) -> std::path::PathBuf {
    let dir = q.scratch("notes");
    let copied = std::process::Command::new("cp")
        .args(["-a", "--"])
        .arg(source)
        .arg(&dir)
        .status()
        .expect("cp runs");
    assert!(copied.success());
    dir.join(source.file_name().expect("a name"))
}

fn embedded(source: &Path, files: usize, clients: usize, each: usize) -> Measured {
    let mut q = Quarry::new();
    q.without_model();
    let key = q.integration("Bench", "all", &["--quota", "unlimited"]);
    let dir = folder(&q, source);
    q.start_with_env(&UNBOUNDED);
    let started = Instant::now();
    q.add_folder("Notes", &dir);
    wait_found(&[&q], &key, files);
    let index_s = started.elapsed().as_secs_f64();
    let saves = saves(&q, &key, &dir);
    let (searches, load_s) = load(&[&q], &key, clients, each);
    Measured {
        index_s,
        saves,
        searches,
        load_s,
    }
}

fn team(source: &Path, files: usize, clients: usize, each: usize) -> Measured {
    let url = pg::shared().new_database();
    let mut hosts: Vec<Quarry> = (0..3)
        .map(|_| {
            let mut q = Quarry::new();
            q.without_model();
            q.on_team_database(&url);
            q
        })
        .collect();
    let key = hosts[0].integration("Bench", "all", &["--quota", "unlimited"]);
    for n in 1..3 {
        let keys = hosts[n].keys_dir();
        std::fs::create_dir_all(&keys).expect("keys folder");
        for entry in std::fs::read_dir(hosts[0].keys_dir()).expect("keys") {
            let path = entry.expect("entry").path();
            std::fs::copy(
                &path,
                Path::new(&keys).join(path.file_name().expect("name")),
            )
            .expect("copy the key");
        }
    }
    let dir = folder(&hosts[0], source);
    for host in &mut hosts {
        host.start_with_env(&UNBOUNDED);
    }
    let started = Instant::now();
    hosts[0].add_folder("Notes", &dir);
    let all: Vec<&Quarry> = hosts.iter().collect();
    wait_found(&all, &key, files);
    let index_s = started.elapsed().as_secs_f64();
    // The first host added the folder and syncs it; the last one finds what it synced.
    let saves = saves(&hosts[2], &key, &dir);
    let (searches, load_s) = load(&all, &key, clients, each);
    Measured {
        index_s,
        saves,
        searches,
        load_s,
    }
}

/// Waits until a search on every host finds every note (each has the word "note" in its title).
fn wait_found(hosts: &[&Quarry], key: &str, files: usize) {
    let deadline = Instant::now() + Duration::from_secs(3600);
    for host in hosts {
        loop {
            let body = json!({"query": "note", "semantic_search": false, "limit": 1});
            if host.search(key, body).json()["total"] == files {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the folder was never found whole"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Writes new files one at a time into the synced folder and times each until a search on
/// `reader` finds it.
fn saves(reader: &Quarry, key: &str, dir: &Path) -> Vec<Duration> {
    let mut times = Vec::with_capacity(SAVES);
    for i in 0..SAVES {
        let word = format!("teamsaved{i}x");
        let t = Instant::now();
        std::fs::write(
            dir.join(format!("f0000/saved{i}.md")),
            format!("{word} written by the benchmark"),
        )
        .expect("write");
        loop {
            let body = json!({"query": word, "semantic_search": false});
            if reader.search(key, body).json()["total"] == 1 {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "a save was never found"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        times.push(t.elapsed());
    }
    times
}

/// `clients` threads at once, each running `each` keyword searches on the hosts in turn; every
/// search's time, and the whole run's.
fn load(hosts: &[&Quarry], key: &str, clients: usize, each: usize) -> (Vec<Duration>, f64) {
    let queries = [
        "note",
        "market school",
        "\"the people\"",
        "water -city",
        "garden rain",
    ];
    let started = Instant::now();
    let times = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..clients)
            .map(|c| {
                let host = hosts[c % hosts.len()];
                scope.spawn(move || {
                    (0..each)
                        .map(|i| {
                            let body = json!({
                                "query": queries[(c + i) % queries.len()],
                                "semantic_search": false,
                                "limit": 10,
                            });
                            let t = Instant::now();
                            let answer = host.search(key, body);
                            assert_eq!(answer.status, 200, "{}", answer.text());
                            t.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        runs.into_iter()
            .flat_map(|r| r.join().expect("a client"))
            .collect()
    });
    (times, started.elapsed().as_secs_f64())
}
