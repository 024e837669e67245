//! Semantic search against the real server with the real model (`make setup` installs it):
//! meaning without shared words, filters and exclusions before ranking, snippets and highlights,
//! keyword mode with a warning when no model is loaded, and keyword first: documents are found
//! by keyword before their vectors exist and by meaning after, across a crash; a connector put
//! first gets its vectors first, and its status counts them per kind of document.

use std::time::{Duration, Instant, UNIX_EPOCH};

use quarry_tests::corpus::{MARCH_2026_MS, MONTH_MS, set_mtime, topics};
use quarry_tests::generated::{text, vocabulary};
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::{Value, json};

fn paths(body: &Value) -> Vec<String> {
    body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["path"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_query_finds_by_meaning_what_keyword_search_cannot() {
    let mut q = Quarry::new();
    q.serve_folders(&[("Topics", topics())]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    let query = "puppy playing fetch outdoors";
    let keyword = q.search_ok(&key, json!({"query": query, "semantic_search": false}));
    assert_eq!(keyword["mode"], "keyword");
    assert_eq!(keyword["total"], 0, "no word is shared: {keyword}");

    let semantic = q.search_ok(&key, json!({ "query": query }));
    assert_eq!(semantic["mode"], "semantic", "{semantic}");
    assert_eq!(semantic["warnings"], json!([]));
    assert_eq!(paths(&semantic)[0], "pets.txt", "{semantic}");
    let first = &semantic["results"][0];
    let score = first["score"].as_f64().expect("score");
    assert!(score > 0.0 && score <= 1.0, "{first}");
    assert!(
        first["snippet"]
            .as_str()
            .unwrap_or_default()
            .contains("dog loves chasing"),
        "{first}"
    );
    // Results carry the same fields as in keyword mode, scores never increase down the list.
    let scores: Vec<f64> = semantic["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["score"].as_f64().unwrap_or(0.0))
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert_eq!(
        semantic["total"], 4,
        "every allowed document is a candidate"
    );

    // The terminal's search does the same with --semantic.
    let cli = q.cli_json(&["search", query, "--semantic", "--json"]);
    assert_eq!(paths(&cli)[0], "pets.txt", "{cli}");
    assert_eq!(q.cli_json(&["search", query, "--json"])["total"], 0);

    let bread = q.search_ok(
        &key,
        json!({"query": "how long should a loaf stay in the oven"}),
    );
    assert_eq!(paths(&bread)[0], "baking.txt", "{bread}");
    // Highlights mark the query words the snippet contains (here: "the", "oven").
    let first = &bread["results"][0];
    let snippet: Vec<char> = first["snippet"]
        .as_str()
        .unwrap_or_default()
        .chars()
        .collect();
    let marked: Vec<String> = first["highlights"]
        .as_array()
        .expect("highlights")
        .iter()
        .map(|h| {
            let (s, e) = (
                h["start"].as_u64().unwrap_or(0) as usize,
                h["end"].as_u64().unwrap_or(0) as usize,
            );
            snippet[s..e].iter().collect::<String>().to_lowercase()
        })
        .collect();
    assert!(marked.contains(&"oven".to_owned()), "{marked:?} in {first}");
    assert!(
        marked.iter().all(|w| [
            "how", "long", "should", "a", "loaf", "stay", "in", "the", "oven"
        ]
        .contains(&w.as_str())),
        "{marked:?}"
    );
}

#[test]
fn filters_and_exclusions_apply_before_semantic_ranking() {
    let mut q = Quarry::new();
    q.serve_folders(&[("Topics", topics())]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    let query = "puppy playing fetch outdoors";

    let texts_only = q.search_ok(
        &key,
        json!({"query": query, "file_extensions_filter": ["md"]}),
    );
    assert_eq!(paths(&texts_only), ["finance.md"]);

    let recent = q.search_ok(
        &key,
        json!({"query": query, "update_time_filter": {"from": "2026-04-15"}}),
    );
    let mut got = paths(&recent);
    got.sort();
    assert_eq!(got, ["baking.txt", "travel.txt"]);

    let excluded = q.search_ok(&key, json!({"query": format!("{query} -dog")}));
    assert!(
        !paths(&excluded).contains(&"pets.txt".to_owned()),
        "{excluded}"
    );

    // Sorting by time orders the candidates by time, newest first.
    let newest = q.search_ok(&key, json!({"query": query, "sort_by": "update_time"}));
    assert_eq!(
        paths(&newest),
        ["travel.txt", "baking.txt", "finance.md", "pets.txt"]
    );
    // Paging walks the same order.
    let second = q.search_ok(&key, json!({"query": query, "limit": 1, "offset": 1}));
    let all = q.search_ok(&key, json!({ "query": query }));
    assert_eq!(paths(&second)[0], paths(&all)[1]);
}

#[test]
fn without_a_model_search_is_keyword_and_a_model_added_later_covers_every_document() {
    let mut q = Quarry::new();
    let dir = q.scratch("topics");
    quarry_tests::corpus::write(&dir, &topics());
    q.add_folder("Topics", &dir);
    q.start_with_env(&[("QUARRY_MODEL_DIR", "none")]);
    // (The CLI the harness reads has the model, so it counts the vectors as pending.)
    q.wait_for("the keyword sync", |c| {
        c.first()
            .is_some_and(|c| c["status"] == "idle" && c["doc_count"] == 4)
    });
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    let body = q.search_ok(&key, json!({"query": "dog"}));
    assert_eq!(body["mode"], "keyword");
    assert_eq!(paths(&body), ["pets.txt"]);
    assert!(
        body["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .contains("no embedding model"),
        "{body}"
    );

    // With the model back, the documents indexed without vectors get them in the background,
    // from the text the index holds: nothing is fetched again.
    q.stop();
    q.start();
    let query = json!({"query": "puppy playing fetch outdoors"});
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let body = q.search_ok(&key, query.clone());
        if body["mode"] == "semantic"
            && paths(&body).first().map(String::as_str) == Some("pets.txt")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "semantic search never found pets.txt: {body}\n{}",
            q.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    q.wait_synced();
    let topics = &q.connectors()[0];
    assert_eq!(topics["embedding"]["pending"], 0, "{topics}");
    assert_eq!(
        topics["progress"]["indexed"], 0,
        "no document was fetched again: {topics}"
    );
}

/// `count` files of made-up words (far from any real query's meaning, and slow to embed),
/// newer than `pets.txt`, written into `dir` beside the topics.
fn filler(dir: &std::path::Path, count: usize) {
    let words = vocabulary(3000);
    let mut rng = Rng(7);
    for n in 0..count {
        let path = dir.join(format!("filler-{n:04}.txt"));
        std::fs::write(&path, text(&mut rng, &words, 150)).expect("write filler");
        let months = 6 + (n as i64 % 12);
        set_mtime(
            &path,
            UNIX_EPOCH + Duration::from_millis((MARCH_2026_MS + months * MONTH_MS) as u64),
        );
    }
}

fn pending(q: &Quarry) -> u64 {
    q.connectors()[0]["embedding"]["pending"]
        .as_u64()
        .expect("embedding progress with a model loaded")
}

#[test]
fn documents_are_found_by_keyword_before_their_vectors_exist_and_by_meaning_after_a_crash() {
    let mut q = Quarry::new();
    let dir = q.scratch("topics");
    quarry_tests::corpus::write(&dir, &topics());
    filler(&dir, 600);
    q.add_folder("Topics", &dir);
    q.start();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.wait_for("the keyword sync", |c| {
        c.first()
            .is_some_and(|c| c["status"] == "idle" && c["doc_count"] == 604)
    });

    // Searchable by keyword at once; the oldest document (pets.txt) is embedded last.
    let waiting = pending(&q);
    assert!(waiting > 0, "the vectors come after the sync");
    let body = q.search_ok(&key, json!({"query": "dog"}));
    assert_eq!(body["mode"], "semantic", "{body}");
    assert_eq!(paths(&body), ["pets.txt"], "{body}");
    let warning = body["warnings"][0].as_str().unwrap_or_default();
    assert!(
        warning.contains("not searchable by meaning yet") && warning.contains("ranked by keyword"),
        "{body}"
    );
    let by_meaning = json!({"query": "puppy playing fetch outdoors"});
    let early = q.search_ok(&key, by_meaning.clone());
    assert!(
        !paths(&early).contains(&"pets.txt".to_owned()),
        "pets.txt shares no word with the query and has no vectors yet: {early}"
    );

    // A crash with vectors pending loses none of them: the index is the queue.
    let deadline = Instant::now() + Duration::from_secs(60);
    while pending(&q) == waiting {
        assert!(
            Instant::now() < deadline,
            "no vectors were stored\n{}",
            q.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let before_crash = pending(&q);
    assert!(before_crash > 0, "still pending when the server is killed");
    q.kill();
    q.start();
    q.wait_synced();
    let topics = &q.connectors()[0];
    assert_eq!(topics["doc_count"], 604, "{topics}");
    assert_eq!(topics["embedding"]["pending"], 0, "{topics}");

    let late = q.search_ok(&key, by_meaning);
    assert_eq!(late["warnings"], json!([]), "{late}");
    assert_eq!(paths(&late)[0], "pets.txt", "{late}");
}

#[test]
fn an_index_of_an_older_layout_is_rebuilt_from_the_sources_at_start() {
    let mut q = Quarry::new();
    q.serve_folders(&[("Topics", topics())]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.stop();
    // What an index written before layout versions existed looks like.
    std::fs::remove_file(q.data_dir().join("index/quarry-format")).expect("format file");
    let search_cli = q.cli(&["search", "dog"]);
    assert!(
        !search_cli.ok && search_cli.stderr.contains("must be rebuilt"),
        "{}",
        search_cli.stderr
    );

    q.start();
    q.wait_for("the rebuilt index synced and embedded", |c| {
        c.first().is_some_and(|c| {
            c["doc_count"] == 4 && c["status"] == "idle" && c["embedding"]["pending"] == 0
        })
    });
    assert!(
        q.log().contains("rebuilding it from the sources"),
        "{}",
        q.log()
    );
    let body = q.search_ok(&key, json!({"query": "puppy playing fetch outdoors"}));
    assert_eq!(body["mode"], "semantic");
    assert_eq!(paths(&body)[0], "pets.txt", "{body}");
    assert_eq!(body["total"], 4);
}

/// `count` files named `stem-NNNN.ext` of 30 made-up words each, written into `dir`.
fn short_files(dir: &std::path::Path, stem: &str, ext: &str, count: usize, seed: u64) {
    let words = vocabulary(2000);
    let mut rng = Rng(seed);
    for n in 0..count {
        let path = dir.join(format!("{stem}-{n:04}.{ext}"));
        std::fs::write(&path, text(&mut rng, &words, 30)).expect("write a file");
    }
}

/// The embedding progress of every connector, in the order the server lists them.
fn pending_by_name(q: &Quarry) -> Vec<(String, u64)> {
    q.connectors()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["embedding"]["pending"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect()
}

#[test]
fn a_connector_put_first_gets_its_vectors_before_others_and_its_status_counts_them_per_kind() {
    let mut q = Quarry::new();
    let notes = q.scratch("notes");
    let code = q.scratch("code");
    // Prose would come first; the code is put first, and needs more than one round (256).
    short_files(&notes, "note", "md", 30, 3);
    short_files(&code, "module", "rs", 300, 5);
    q.add_folder("Notes", &notes);
    q.add_folder("Work code", &code);
    let pinned = q.cli(&["connector", "embed-first", "Work code"]);
    assert!(pinned.ok, "{}", pinned.stderr);
    assert!(
        pinned.stdout.contains("before those of other connectors"),
        "{}",
        pinned.stdout
    );
    // Both synced for keyword search first (no model), so the queue starts with both waiting.
    q.start_with_env(&[("QUARRY_MODEL_DIR", "none")]);
    q.wait_for("both keyword syncs", |cs| {
        cs.iter().all(|c| c["status"] == "idle")
            && cs.iter().map(|c| &c["doc_count"]).collect::<Vec<_>>() == [30, 300]
    });

    q.stop();
    q.start();
    // Notes are counted before the code (a later look at the index), so notes with vectors
    // while code still waits would show here.
    let mut code_partly = false;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let seen = pending_by_name(&q);
        assert_eq!(seen[0].0, "Notes", "{seen:?}");
        let (notes_left, code_left) = (seen[0].1, seen[1].1);
        code_partly |= code_left > 0 && code_left < 300 && notes_left == 30;
        assert!(
            notes_left == 30 || code_left == 0,
            "notes before the code put first: {seen:?}"
        );
        if notes_left == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "vectors never finished: {seen:?}\n{}",
            q.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        code_partly,
        "a round of code alone was seen, the notes waiting"
    );

    let status = q.cli(&["connector", "status", "Work code", "--json"]);
    assert!(status.ok, "{}", status.stderr);
    let status: Value = serde_json::from_str(&status.stdout).expect("json");
    assert_eq!(status["embed_first"], true, "{status}");
    assert_eq!(
        status["embedding_by_kind"],
        json!([{"kind": "code", "documents": 300, "embedded": 300, "first_passages": 0}])
    );
    let text = q.cli(&["connector", "status", "Notes"]);
    assert!(
        text.stdout.contains("embedding (prose first):")
            && text.stdout.contains("prose  30 of 30 documents"),
        "{}",
        text.stdout
    );
    let back = q.cli(&["connector", "embed-first", "Work code", "--undo"]);
    assert!(
        back.ok && back.stdout.contains("back in line"),
        "{}",
        back.stdout
    );
}
