//! Listing plus text extraction through the sandboxed folder component, beside a native Rust
//! walk-and-read of the same tree, in the same run. Prints files/s, MB/s and the ratio. Then
//! extraction per file format: each office, e-book and mail fixture of `tests/fixtures/office`
//! copied into a folder of its own, through the component, beside the report's text as plain
//! files in the same run.
//!
//! Run with `make bench` (or `cargo bench -p quarry-runtime --bench folder`); `QUARRY_BENCH_FILES`
//! sets the number of files (default 4000 of about 8 KB), `QUARRY_BENCH_ROUNDS` the measured rounds
//! (default 3; each side's best round is reported), `QUARRY_BENCH_COPIES` the copies of each
//! format's file (default 200).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use quarry_runtime::{Grant, Limits, Runtime, RuntimeConfig, ToFetch};

/// One measured pass: files read and bytes of text produced.
struct Pass {
    files: usize,
    bytes: u64,
    elapsed: Duration,
}

impl Pass {
    fn files_per_s(&self) -> f64 {
        self.files as f64 / self.elapsed.as_secs_f64()
    }

    fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.elapsed.as_secs_f64()
    }
}

fn main() {
    let files: usize = quarry_tests::bench::env_or("QUARRY_BENCH_FILES", 4000);
    let tmp = tempfile::tempdir().expect("temp dir");
    let written = write_tree(tmp.path(), files);
    println!(
        "folder bench: {files} plain-text files, {:.1} MB, in {} sub-folders",
        written as f64 / 1e6,
        files / 50
    );

    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(quarry_tests::component_cache()),
        ..RuntimeConfig::default()
    })
    .expect("runtime starts");
    let plugin = runtime
        .load(&quarry_tests::plugin_dir("folder"), Limits::default())
        .expect("folder plugin loads");

    // Warm the page cache and the instance pool once, then alternate, keeping each side's best.
    native(tmp.path());
    sandboxed(&plugin, tmp.path());
    let mut best: [Option<Pass>; 3] = [None, None, None];
    let rounds: usize = quarry_tests::bench::env_or("QUARRY_BENCH_ROUNDS", 3);
    for _ in 0..rounds.max(1) {
        let n = native(tmp.path());
        let s = sandboxed(&plugin, tmp.path());
        let l = listing(&plugin, tmp.path());
        assert_eq!(n.files, s.files, "both sides see the same files");
        assert_eq!(n.bytes, s.bytes, "both sides read the same text");
        for (slot, pass) in best.iter_mut().zip([n, s, l]) {
            if slot.as_ref().is_none_or(|b| pass.elapsed < b.elapsed) {
                *slot = Some(pass);
            }
        }
    }
    let [Some(n), Some(s), Some(l)] = best else {
        unreachable!("three rounds measured each side")
    };
    println!(
        "{:<34} {:>10} {:>10} {:>10}",
        "path", "files/s", "MB/s", "ms"
    );
    for (name, pass) in [
        ("native walk + read (baseline)", &n),
        ("folder component: list + extract", &s),
        ("folder component: list only", &l),
    ] {
        println!(
            "{name:<34} {:>10.0} {:>10.1} {:>10.1}",
            pass.files_per_s(),
            pass.mb_per_s(),
            pass.elapsed.as_secs_f64() * 1e3
        );
    }
    println!(
        "ratio sandboxed / native time: {:.2}x",
        s.elapsed.as_secs_f64() / n.elapsed.as_secs_f64()
    );
    formats(&plugin, tmp.path(), rounds.max(1));
}

/// The formats measured: a name, the fixture, and the extension its copies get.
const FORMATS: [(&str, &str, &str); 12] = [
    (
        "plain text (the report's text)",
        "report.reference.txt",
        "txt",
    ),
    ("ODT (LibreOffice)", "report.odt", "odt"),
    ("RTF (LibreOffice)", "report.rtf", "rtf"),
    ("RTF (pandoc)", "report-pandoc.rtf", "rtf"),
    ("PPTX (pandoc)", "deck.pptx", "pptx"),
    ("PPTX (LibreOffice)", "deck-libreoffice.pptx", "pptx"),
    ("ODP (LibreOffice)", "deck.odp", "odp"),
    ("XLSX (LibreOffice)", "book.xlsx", "xlsx"),
    ("ODS (LibreOffice)", "book.ods", "ods"),
    ("EPUB (pandoc)", "novel.epub", "epub"),
    ("EML with attachments", "mail.eml", "eml"),
    ("DOCX (generated)", "", "docx"),
];

/// Extraction per format, each format's copies in a folder of their own, best of `rounds`.
fn formats(plugin: &quarry_runtime::Plugin, tmp: &Path, rounds: usize) {
    let copies: usize = quarry_tests::bench::env_or("QUARRY_BENCH_COPIES", 200);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/office");
    let report = fs::read_to_string(fixtures.join("report.reference.txt")).expect("fixture");
    let paragraphs: Vec<&str> = report.split("\n\n").collect();
    println!("\nextraction per format, {copies} copies of each file, through the component");
    println!(
        "{:<32} {:>9} {:>10} {:>10} {:>12} {:>10}",
        "format", "KB/file", "files/s", "MB/s in", "text KB/file", "vs text"
    );
    let mut baseline = None;
    for (name, fixture, extension) in FORMATS {
        let bytes = if fixture.is_empty() {
            quarry_tests::docx::docx("Quarry field notes report", &paragraphs, "")
        } else {
            fs::read(fixtures.join(fixture)).expect("fixture")
        };
        let dir = tmp.join(format!("format-{extension}-{}", fixture.replace('.', "-")));
        fs::create_dir_all(&dir).expect("mkdir");
        for i in 0..copies {
            fs::write(dir.join(format!("f{i:04}.{extension}")), &bytes).expect("write");
        }
        sandboxed(plugin, &dir);
        let best = (0..rounds)
            .map(|_| sandboxed(plugin, &dir))
            .min_by_key(|pass| pass.elapsed)
            .expect("a round");
        let per_file = best.elapsed.as_secs_f64() / best.files.max(1) as f64;
        let base = *baseline.get_or_insert(per_file);
        println!(
            "{name:<32} {:>9.1} {:>10.0} {:>10.1} {:>12.1} {:>9.2}x",
            bytes.len() as f64 / 1e3,
            best.files_per_s(),
            (bytes.len() * best.files) as f64 / 1e6 / best.elapsed.as_secs_f64(),
            best.bytes as f64 / 1e3 / best.files.max(1) as f64,
            per_file / base
        );
    }
}

/// Writes `files` text files of about 8 KB in sub-folders of 50; returns the bytes written.
fn write_tree(root: &Path, files: usize) -> u64 {
    let words = [
        "search",
        "quarry",
        "index",
        "sandbox",
        "folder",
        "plugin",
        "tantivy",
        "wasm",
        "local",
        "agent",
        "document",
        "query",
        "vector",
        "keyword",
        "stream",
        "checkpoint",
    ];
    let mut total = 0u64;
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..files {
        let mut text = String::with_capacity(8300);
        while text.len() < 8192 {
            // xorshift: deterministic, no dependency.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(words[(state % words.len() as u64) as usize]);
            text.push(if state.is_multiple_of(11) { '\n' } else { ' ' });
        }
        let dir = root.join(format!("d{:03}", i / 50));
        fs::create_dir_all(&dir).expect("mkdir");
        fs::write(dir.join(format!("note-{i:05}.txt")), &text).expect("write");
        total += text.len() as u64;
    }
    total
}

/// The floor: a sorted recursive walk reading every file and checking it is UTF-8.
fn native(root: &Path) -> Pass {
    let started = Instant::now();
    let mut pass = Pass {
        files: 0,
        bytes: 0,
        elapsed: Duration::ZERO,
    };
    walk(root, &mut pass);
    pass.elapsed = started.elapsed();
    pass
}

fn walk(dir: &Path, pass: &mut Pass) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, pass);
        } else {
            let bytes = fs::read(&path).expect("read");
            let text = String::from_utf8(bytes).expect("utf-8");
            pass.files += 1;
            pass.bytes += text.len() as u64;
        }
    }
}

/// The folder component: list every batch, then fetch the text of every document.
fn sandboxed(plugin: &quarry_runtime::Plugin, root: &Path) -> Pass {
    run_component(plugin, root, true)
}

/// The folder component's listing alone (no text fetched).
fn listing(plugin: &quarry_runtime::Plugin, root: &Path) -> Pass {
    run_component(plugin, root, false)
}

fn run_component(plugin: &quarry_runtime::Plugin, root: &Path, extract: bool) -> Pass {
    let values = BTreeMap::from([("folder".to_owned(), root.to_string_lossy().into_owned())]);
    let grant = Grant::for_settings(plugin.manifest(), &values);
    let started = Instant::now();
    let mut session = plugin.session(&values, &grant, None).expect("session");
    let mut pass = Pass {
        files: 0,
        bytes: 0,
        elapsed: Duration::ZERO,
    };
    let mut checkpoint: Option<String> = None;
    loop {
        let batch = session.list_docs(checkpoint.as_deref()).expect("list");
        pass.files += batch.upserts.len();
        if extract {
            // As a sync asks: small documents several at a time.
            let wanted: Vec<ToFetch<'_>> = batch.upserts.iter().map(ToFetch::from).collect();
            for text in session.fetch_all(&wanted) {
                pass.bytes += text.expect("extract").text.len() as u64;
            }
        } else {
            pass.bytes += batch.upserts.iter().map(|d| d.meta.size_bytes).sum::<u64>();
        }
        if !batch.more {
            break;
        }
        checkpoint = Some(batch.checkpoint);
    }
    pass.elapsed = started.elapsed();
    pass
}
