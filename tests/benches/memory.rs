//! The resident memory of a long-running server, today's build beside a baseline build measured
//! in the same run (`QUARRY_BENCH_BASELINE`: a `quarry` binary of an earlier revision, which
//! `make bench` builds once, and `QUARRY_BENCH_BASELINE_MODEL`: the model folder in the form that
//! revision fetched, if it differs; without them only today's build is measured):
//!
//! - idle after a first sync of 30,000 files with the default model, once every vector is
//!   written: anonymous memory (`RssAnon`: heap, stacks, what the process itself holds) beside
//!   the total resident;
//! - the peak resident (`VmHWM`, mapped index pages included) and the peak anonymous memory over
//!   a first sync of 100,000 and 1,000,000 files, no model;
//! - idle after a restart over that index, once the start-up listing (which finds changes made
//!   while no server ran) has finished, no model.
//!
//! `QUARRY_BENCH_MEMORY_MODEL_FILES` sets the size of the run with the model (default 30000; 0
//! skips it), `QUARRY_BENCH_MEMORY_FILES` the keyword-only sizes (default `100000,1000000`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use quarry_tests::bench::{MemorySampler, env_or, peak_rss_mib, status_mib};
use quarry_tests::generated::write_notes;
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::Value;

/// How long an idle server is left before its memory is read: long enough for whatever it
/// frees once work is done to be freed.
const SETTLE: Duration = Duration::from_secs(15);

/// The longest any one sync, embedding or listing may take before the bench gives up.
const DEADLINE: Duration = Duration::from_secs(3 * 3600);

/// The targets of the "installed and left running" work, in MiB: idle anonymous memory with the
/// model after 30,000 files; peak resident over a first sync of 100,000 and 1,000,000 files;
/// idle anonymous memory over 1,000,000 files without a model.
const IDLE_WITH_MODEL_TARGET: f64 = 150.0;
const PEAK_TARGETS: [(usize, f64); 2] = [(100_000, 400.0), (1_000_000, 768.0)];
const IDLE_WITHOUT_MODEL_TARGET: f64 = 200.0;

/// A build of `quarry` to measure: its name in the tables and its binary (`None`: the one cargo
/// built beside this bench).
struct Build {
    name: &'static str,
    binary: Option<PathBuf>,
    /// The model folder it runs with (`None`: the default).
    model: Option<PathBuf>,
}

/// Memory of an idle server, in MiB.
struct Idle {
    anon: f64,
    resident: f64,
}

/// What a first sync without a model and the restart after it measured, in MiB.
struct Keyword {
    peak_resident: f64,
    peak_anon: f64,
    sync: Duration,
    idle: Idle,
}

fn main() {
    let mut builds = vec![Build {
        name: "today",
        binary: None,
        model: None,
    }];
    if let Some(path) = std::env::var_os("QUARRY_BENCH_BASELINE") {
        builds.push(Build {
            name: "baseline",
            binary: Some(PathBuf::from(path)),
            model: std::env::var_os("QUARRY_BENCH_BASELINE_MODEL").map(PathBuf::from),
        });
    }
    let model_files = env_or("QUARRY_BENCH_MEMORY_MODEL_FILES", 30_000);
    let sizes: Vec<usize> = std::env::var("QUARRY_BENCH_MEMORY_FILES")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();

    if model_files > 0 && quarry_tests::model_dir().join("onnx/model.onnx").is_file() {
        idle_with_model_table(&builds, model_files);
    }
    if !sizes.is_empty() {
        keyword_table(&builds, &sizes);
    }
}

/// Measures and prints the idle memory with the model after a first sync of `files` files.
fn idle_with_model_table(builds: &[Build], files: usize) {
    let folder = Folder::new(files);
    let measured: Vec<Idle> = builds
        .iter()
        .map(|b| idle_with_model(b, &folder.path, files))
        .collect();
    println!(
        "idle with the model (MiniLM) after a first sync of {files} files, every vector written"
    );
    println!(
        "{:>10} {:>10} {:>12} {:>10} {:>10}",
        "build", "anon MiB", "resident MiB", "target", "vs base"
    );
    for (build, idle) in builds.iter().zip(&measured) {
        println!(
            "{:>10} {:>10.0} {:>12.0} {:>10} {:>9.2}x",
            build.name,
            idle.anon,
            idle.resident,
            format!("<= {IDLE_WITH_MODEL_TARGET:.0}"),
            idle.anon / measured.last().map_or(idle.anon, |b| b.anon),
        );
    }
    println!(
        "anon: RssAnon (heap, stacks) {}s after the last vector was written; resident: VmRSS,\n\
         mapped index and model pages included (the kernel's to drop). vs base: anon / the\n\
         baseline's anon.\n",
        SETTLE.as_secs()
    );
}

/// Measures and prints the peaks of first syncs without a model and the idle memory after a
/// restart, per folder size.
fn keyword_table(builds: &[Build], sizes: &[usize]) {
    let mut rows = Vec::new();
    for &files in sizes {
        let folder = Folder::new(files);
        let measured: Vec<Keyword> = builds
            .iter()
            .map(|b| keyword(b, &folder.path, files))
            .collect();
        rows.push((files, measured));
    }
    println!("first sync without a model, then idle after a restart and its start-up listing");
    println!(
        "{:>8} {:>10} {:>8} {:>10} {:>8} {:>9} {:>10} {:>10} {:>12} {:>8}",
        "files",
        "build",
        "sync s",
        "peak MiB",
        "target",
        "vs base",
        "peak anon",
        "idle anon",
        "idle resident",
        "target"
    );
    for (files, measured) in &rows {
        let base = measured.last().map_or(1.0, |b| b.peak_resident);
        let peak_target = PEAK_TARGETS
            .iter()
            .find(|(n, _)| n == files)
            .map_or("-".to_owned(), |(_, t)| format!("< {t:.0}"));
        let idle_target = if *files == 1_000_000 {
            format!("<= {IDLE_WITHOUT_MODEL_TARGET:.0}")
        } else {
            "-".to_owned()
        };
        for (build, k) in builds.iter().zip(measured) {
            println!(
                "{files:>8} {:>10} {:>8.0} {:>10.0} {peak_target:>8} {:>8.2}x {:>10.0} {:>10.0} {:>12.0} {idle_target:>8}",
                build.name,
                k.sync.as_secs_f64(),
                k.peak_resident,
                k.peak_resident / base,
                k.peak_anon,
                k.idle.anon,
                k.idle.resident,
            );
        }
    }
    println!(
        "peak: VmHWM over the first sync, index pages included; vs base: peak / the baseline's.\n\
         peak anon: RssAnon's peak (sampled every 100 ms). idle: {}s after the restart's\n\
         start-up listing finished.\n",
        SETTLE.as_secs()
    );
}

/// A generated folder of notes, deleted when dropped.
struct Folder {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Folder {
    fn new(files: usize) -> Folder {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("notes");
        let started = Instant::now();
        write_notes(&path, files, &mut Rng(files as u64));
        eprintln!(
            "memory bench: wrote {files} files in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        Folder { _dir: dir, path }
    }
}

/// A server of `build` with its own data folder, the model or none.
fn server(build: &Build, model: bool) -> Quarry {
    let mut q = Quarry::new();
    if let Some(binary) = &build.binary {
        q.use_binary(binary.clone());
    }
    if !model {
        q.without_model();
    } else if let Some(dir) = &build.model {
        q.with_model(dir.clone());
    }
    q
}

/// The first sync of `folder` with the model, until every vector is written; then the idle
/// server's memory.
fn idle_with_model(build: &Build, folder: &Path, files: usize) -> Idle {
    let mut q = server(build, true);
    q.start();
    let started = Instant::now();
    q.add_folder("Notes", folder);
    wait(&q, "the sync and its embeddings", |c| {
        c["status"] == "idle"
            && c["doc_count"] == files
            && c["embedding"]["pending"].as_u64() == Some(0)
    });
    eprintln!(
        "memory bench: {} synced and embedded {files} files in {:.0} s",
        build.name,
        started.elapsed().as_secs_f64()
    );
    idle(&q)
}

/// The first sync of `folder` without a model, its peaks, then a restart and the idle memory
/// after its start-up listing.
fn keyword(build: &Build, folder: &Path, files: usize) -> Keyword {
    let mut q = server(build, false);
    q.start();
    let pid = q.pid().expect("running");
    let sampler = MemorySampler::start(pid);
    let started = Instant::now();
    q.add_folder("Notes", folder);
    wait(&q, "the first sync", |c| {
        c["status"] == "idle" && c["doc_count"] == files
    });
    let sync = started.elapsed();
    let peak_resident = peak_rss_mib(pid);
    let peak_anon = sampler.finish().anon_mib;
    eprintln!(
        "memory bench: {} synced {files} files in {:.0} s, peak {peak_resident:.0} MiB",
        build.name,
        sync.as_secs_f64()
    );

    let before = q.connectors().remove(0)["last_sync_time"].clone();
    q.stop();
    q.start();
    wait(&q, "the start-up listing", |c| {
        c["status"] == "idle" && c["last_sync_time"] != before
    });
    Keyword {
        peak_resident,
        peak_anon,
        sync,
        idle: idle(&q),
    }
}

/// Waits until the only connector is in the state `done` says.
fn wait(q: &Quarry, what: &str, done: impl Fn(&Value) -> bool) {
    let started = Instant::now();
    loop {
        let connector = q.connectors().remove(0);
        if done(&connector) {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "{what} did not finish: {connector}\n{}",
            q.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The server's memory after [`SETTLE`] with nothing to do.
fn idle(q: &Quarry) -> Idle {
    std::thread::sleep(SETTLE);
    let pid = q.pid().expect("running");
    Idle {
        anon: status_mib(pid, "RssAnon:").expect("RssAnon"),
        resident: status_mib(pid, "VmRSS:").expect("VmRSS"),
    }
}
