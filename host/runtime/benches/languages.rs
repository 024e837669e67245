//! What a document costs through connectors of each language, in the same run: the Rust folder
//! connector, the Python mbox connector (componentize-py), the JavaScript JSON-over-HTTP
//! connector (componentize-js) and the Rust feed connector (wasi:http), each over the same
//! `QUARRY_BENCH_DOCS` small documents (default 200) in its own format (files, one mailbox, a
//! JSON array and an RSS feed served on loopback).
//!
//! For each: a cold call (a new instance and `validate-config`), the listing per document, and
//! `fetch-content` per document on a warm instance (host -> guest -> host, with the guest's own
//! work: reading a file, parsing a message, or, for the two HTTP connectors, fetching their
//! source again unless the instance kept it). Ratios are to the Rust folder connector.
//!
//! Run with `make bench` (or `cargo bench -p quarry-runtime --bench languages`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use quarry_runtime::{Grant, Limits, Plugin, Runtime, RuntimeConfig};
use quarry_tests::web::{WebServer, rss};

/// Cold calls measured per connector (the median is reported).
const COLD_RUNS: usize = 15;

/// A connector to measure: its name in the table, its plugin id, its settings.
type Case = (&'static str, &'static str, Vec<(&'static str, String)>);

struct Row {
    name: &'static str,
    cold: Duration,
    list_per_doc: Duration,
    fetch_per_doc: Duration,
    docs: usize,
}

fn main() {
    let docs: usize = quarry_tests::bench::env_or("QUARRY_BENCH_DOCS", 200);
    let tmp = tempfile::tempdir().expect("temp dir");
    let web = WebServer::start();
    let notes = tmp.path().join("notes");
    let mail = tmp.path().join("mail");
    std::fs::create_dir_all(&notes).expect("notes");
    std::fs::create_dir_all(&mail).expect("mail");
    let mut mbox = String::new();
    let mut records = Vec::new();
    let mut items = Vec::new();
    for i in 0..docs {
        let text = format!("Document {i} about the quarterly harvest of apples and pears.");
        std::fs::write(notes.join(format!("note-{i:04}.txt")), &text).expect("note");
        mbox.push_str(&format!(
            "From a@example.com Mon Nov  2 09:00:00 2026\nFrom: a@example.com\nSubject: Message {i}\nMessage-ID: <m{i}@example.com>\nDate: Mon, 02 Nov 2026 09:00:00 +0000\n\n{text}\n\n"
        ));
        records.push(format!(
            r#"{{"id": {i}, "title": "Record {i}", "text": "{text}"}}"#
        ));
        items.push((format!("g{i}"), format!("Item {i}"), text));
    }
    std::fs::write(mail.join("inbox.mbox"), mbox).expect("mbox");
    web.put(
        "/records.json",
        "application/json",
        &format!("[{}]", records.join(",")),
    );
    let items: Vec<(&str, &str, &str)> = items
        .iter()
        .map(|(g, t, x)| (g.as_str(), t.as_str(), x.as_str()))
        .collect();
    web.put("/feed.xml", "application/rss+xml", &rss(&items));

    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(quarry_tests::component_cache()),
        ..RuntimeConfig::default()
    })
    .expect("runtime starts");
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let cases: [Case; 4] = [
        ("Rust (folder)", "folder", vec![("folder", path(&notes))]),
        ("Python (mbox)", "mbox", vec![("folder", path(&mail))]),
        (
            "JavaScript (json-http)",
            "json-http",
            vec![("url", web.url("/records.json"))],
        ),
        (
            "Rust (feed, wasi:http)",
            "feed",
            vec![("feed_url", web.url("/feed.xml"))],
        ),
    ];
    println!("languages bench: {docs} documents per connector");
    let mut rows = Vec::new();
    for (name, id, settings) in cases {
        let started = Instant::now();
        let plugin = runtime
            .load(&quarry_tests::plugin_dir(id), Limits::default())
            .unwrap_or_else(|e| panic!("{id} loads: {e}"));
        let loaded = started.elapsed();
        let values: BTreeMap<String, String> = settings
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        let grant = Grant::for_settings(plugin.manifest(), &values);
        rows.push(measure(name, &plugin, &values, &grant));
        let size = std::fs::metadata(plugin.manifest().component_path(plugin.dir()))
            .map_or(0, |m| m.len());
        println!(
            "  {name}: component {:.1} MB, loaded in {:.2} s (compiled form from the cache when warm)",
            size as f64 / 1e6,
            loaded.as_secs_f64()
        );
    }
    let base = &rows[0];
    println!();
    println!(
        "| connector | docs | cold call (new instance + validate) | list / doc | fetch-content / doc | vs Rust folder (fetch) |"
    );
    println!("|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {:.2} ms | {:.1} µs | {:.1} µs | {:.1}x |",
            r.name,
            r.docs,
            r.cold.as_secs_f64() * 1e3,
            r.list_per_doc.as_secs_f64() * 1e6,
            r.fetch_per_doc.as_secs_f64() * 1e6,
            r.fetch_per_doc.as_secs_f64() / base.fetch_per_doc.as_secs_f64()
        );
    }
}

fn measure(
    name: &'static str,
    plugin: &Plugin,
    values: &BTreeMap<String, String>,
    grant: &Grant,
) -> Row {
    let mut cold: Vec<Duration> = (0..COLD_RUNS)
        .map(|_| {
            let started = Instant::now();
            plugin
                .validate_config(values, grant)
                .expect("settings are valid");
            started.elapsed()
        })
        .collect();
    cold.sort();

    let mut session = plugin.session(values, grant, None).expect("session");
    // One listing warms the instance; the next is measured.
    let (first, _) = list(&mut session);
    assert!(!first.is_empty(), "{name} lists nothing");
    let started = Instant::now();
    let (listed, _) = list(&mut session);
    let list_time = started.elapsed();
    let started = Instant::now();
    for doc in &listed {
        let text = session
            .fetch_content(&doc.id, &doc.locator)
            .expect("content");
        assert!(text.text.contains("harvest"), "{name}: {}", text.text);
    }
    let fetch_time = started.elapsed();
    let n = u32::try_from(listed.len()).unwrap_or(u32::MAX).max(1);
    Row {
        name,
        cold: cold[cold.len() / 2],
        list_per_doc: list_time / n,
        fetch_per_doc: fetch_time / n,
        docs: listed.len(),
    }
}

fn list(session: &mut quarry_runtime::Session) -> (Vec<quarry_core::SourceDoc>, usize) {
    let mut docs = Vec::new();
    let mut checkpoint: Option<String> = None;
    let mut batches = 0;
    loop {
        let batch = session.list_docs(checkpoint.as_deref()).expect("listing");
        batches += 1;
        docs.extend(batch.upserts);
        if !batch.more {
            return (docs, batches);
        }
        checkpoint = Some(batch.checkpoint);
    }
}
