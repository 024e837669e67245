//! Credentials in a shared folder never reach an integration, through any route (REST search
//! by value and by context, document text, file download, and the same over MCP), while every
//! look-alike stays searchable; the user sees which files are held back and why, and decides;
//! an index written before the check is cleaned at the next start.

use std::time::Duration;

use quarry_tests::admin::sign_in;
use quarry_tests::credentials::{SharedFolder, shared_folder};
use quarry_tests::mcp::{Sdk, call, over_http};
use quarry_tests::quarry::{Quarry, result_paths as paths};
use serde_json::{Value, json};

/// Fails when `text` holds any of `values`.
fn assert_no_leak(route: &str, text: &str, values: &[&str]) {
    for value in values {
        assert!(
            !text.contains(value),
            "{route} gave out a credential value ({value})"
        );
    }
}

/// A search answer as text, each result's `link` left out: a link repeats the caller's own
/// query (for the document view to mark its words), which here is the value searched for.
/// Tool results are read the same way (their text's `cite:` lines are those links).
fn without_links(mut answer: Value) -> String {
    for result in answer["results"].as_array_mut().into_iter().flatten() {
        if let Some(result) = result.as_object_mut() {
            result.remove("link");
        }
    }
    answer.to_string()
}

/// A request that must end without a 429: retried after `Retry-After` (the integration's rate
/// bound applies to tests too).
fn answered(
    q: &Quarry,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&Value>,
) -> quarry_tests::http::Response {
    loop {
        let response = q.request(method, path, Some(key), body);
        if response.status != 429 {
            return response;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn values(folder: &SharedFolder) -> Vec<&str> {
    folder
        .credentials
        .iter()
        .flat_map(|c| c.values.iter().map(String::as_str))
        .collect()
}

#[test]
fn no_credential_in_a_shared_folder_reaches_an_integration_and_every_look_alike_is_found() {
    let folder = shared_folder(0x5eed_c0ff_ee00_0032);
    assert!(
        folder.credentials.len() >= 40,
        "{}",
        folder.credentials.len()
    );
    assert!(folder.kinds() >= 20, "{} kinds", folder.kinds());
    assert!(
        folder.look_alikes.len() >= 40,
        "{}",
        folder.look_alikes.len()
    );
    let values = values(&folder);

    let mut q = Quarry::new();
    let dir = q.scratch("shared");
    folder.write(&dir);
    let connector = q.add_folder("Shared", &dir);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    // Hundreds of requests in a few seconds, faster than an integration's default rate (100 a
    // second, bursts of 200): what this test proves is what the answers hold, not the rate.
    q.start_with_env(&[("QUARRY_RATE_LIMIT", "100000")]);
    q.wait_synced();

    // The user sees every credential file held back, with why.
    let status = q.cli_json(&["connector", "status", "Shared", "--json"]);
    let held = status["held_back"]["documents"]
        .as_array()
        .expect("held back");
    let held_paths: Vec<&str> = held.iter().filter_map(|d| d["path"].as_str()).collect();
    for credential in &folder.credentials {
        assert!(
            held_paths.contains(&credential.path.as_str()),
            "{} ({}) is not held back: {held_paths:?}",
            credential.path,
            credential.kind
        );
    }
    assert_eq!(status["held_back"]["count"], folder.credentials.len());
    assert!(
        held.iter()
            .all(|d| !d["reason"].as_str().unwrap_or_default().is_empty())
    );
    // An integration sees how many, never which.
    let listed = answered(&q, "GET", "/api/v1/connectors", &key, None);
    assert_eq!(listed.status, 200);
    assert_eq!(
        listed.json()["connectors"][0]["held_back_count"],
        folder.credentials.len()
    );
    assert!(!listed.text().contains("server.key"), "{}", listed.text());

    // Search by each value and by the words around it, by keyword and by meaning.
    for credential in &folder.credentials {
        let mut queries: Vec<&str> = credential.values.iter().map(String::as_str).collect();
        queries.push(&credential.context);
        for query in queries {
            for semantic in [false, true] {
                let body = json!({"query": query, "semantic_search": semantic, "limit": 50});
                let answer = answered(&q, "POST", "/api/v1/search", &key, Some(&body));
                assert_eq!(answer.status, 200, "{}", answer.text());
                assert_no_leak("search", &without_links(answer.json()), &values);
                for path in paths(&answer.json()) {
                    assert_ne!(path, credential.path, "{query:?} found a held-back file");
                }
            }
        }
    }

    // Every look-alike is found by its words.
    let mut indexed: Vec<Value> = Vec::new();
    for look_alike in &folder.look_alikes {
        let body = json!({"query": look_alike.words, "semantic_search": false, "limit": 20});
        let answer = answered(&q, "POST", "/api/v1/search", &key, Some(&body)).json();
        let hit = answer["results"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|hit| hit["path"] == look_alike.path.as_str());
        let Some(hit) = hit else {
            panic!(
                "{} ({}) not found by {:?}: {answer}",
                look_alike.path, look_alike.what, look_alike.words
            );
        };
        indexed.push(hit.clone());
    }

    // Only look-alikes are indexed (semantic search ranks every document with vectors: a broad
    // query lists them all), and every one's text and file, whole and its end, holds no value.
    let body = json!({"query": "notes files configuration", "limit": 100});
    let all = answered(&q, "POST", "/api/v1/search", &key, Some(&body)).json();
    for path in paths(&all) {
        assert!(
            folder.look_alikes.iter().any(|l| l.path == path),
            "{path} is indexed and is no look-alike"
        );
    }
    for hit in &indexed {
        let doc = hit["doc_id"].as_str().expect("doc id");
        let base = format!("/api/v1/connectors/{connector}/docs/{doc}");
        let text = answered(&q, "GET", &base, &key, None);
        assert_eq!(text.status, 200);
        assert_no_leak("document text", &text.text(), &values);
        let file = answered(&q, "GET", &format!("{base}/file"), &key, None);
        assert_eq!(file.status, 200, "{}: {}", hit["path"], file.text());
        assert_no_leak("file download", &file.text(), &values);
        let tail = q.request_with(
            "GET",
            &format!("{base}/file"),
            Some(&key),
            None,
            &[("Range", "bytes=-2000")],
        );
        assert!(matches!(tail.status, 200 | 206), "{}", tail.status);
        assert_no_leak("file download's end", &tail.text(), &values);
    }
    // Held-back documents cannot be read or downloaded, even by their ids.
    for doc in held {
        let id = doc["doc_id"].as_str().expect("doc id");
        let base = format!("/api/v1/connectors/{connector}/docs/{id}");
        for path in [base.clone(), format!("{base}/file")] {
            let refused = answered(&q, "GET", &path, &key, None);
            assert_eq!(refused.status, 404, "{path}: {}", refused.text());
            assert_no_leak(&path, &refused.text(), &values);
        }
        let range = [("Range", "bytes=-2000")];
        let refused = q.request_with("GET", &format!("{base}/file"), Some(&key), None, &range);
        assert_eq!(refused.status, 404, "{}", refused.text());
        assert_no_leak("a range of a held-back file", &refused.text(), &values);
    }

    // The same over MCP, with the official client: a search for every value, by meaning for
    // the words around a sample of them, and a read of a sample of the held-back documents.
    let mut steps = Vec::new();
    for credential in &folder.credentials {
        for value in &credential.values {
            steps.push(call(
                "search",
                json!({"query": value, "semantic_search": false}),
            ));
        }
    }
    for credential in folder.credentials.iter().step_by(5) {
        steps.push(call("search", json!({"query": credential.context})));
    }
    let held_sample: Vec<&Value> = held.iter().step_by(5).collect();
    for doc in &held_sample {
        steps.push(call(
            "read_document",
            json!({"connector_id": connector, "doc_id": doc["doc_id"]}),
        ));
    }
    let results = over_http(Sdk::TypeScript, &q, &key, Value::Array(steps));
    let report: Vec<String> = results
        .iter()
        .map(|r| {
            let text: Vec<&str> = r["text"]
                .as_str()
                .unwrap_or_default()
                .lines()
                .filter(|line| !line.trim_start().starts_with("cite: "))
                .collect();
            format!(
                "{}\n{}\n{}",
                without_links(r["structuredContent"].clone()),
                r["_meta"],
                text.join("\n")
            )
        })
        .collect();
    assert_no_leak("MCP", &report.join("\n"), &values);
    let refused = &results[results.len() - held_sample.len()..];
    assert!(
        refused.iter().all(|r| r["isError"] == true
            && r["text"]
                .as_str()
                .unwrap_or_default()
                .contains("RESOURCE_NOT_FOUND")),
        "{refused:?}"
    );

    redacting_lets_no_value_out(&q, &folder, &key, &connector);
}

/// The same folder redacted: documents whose text holds secrets are indexed with each one
/// replaced (every part of it, to the end of its quoted or delimited span, every secret of a
/// multi-part credential), and no value comes out of search, document text or file.
fn redacting_lets_no_value_out(q: &Quarry, folder: &SharedFolder, key: &str, connector: &str) {
    // Every value, and every part of one between its punctuation (a redaction that stopped at a
    // `;` or at an AWS key's id would leave one), of 8 characters or more.
    let mut values: Vec<&str> = values(folder);
    let parts: Vec<&str> = values
        .iter()
        .flat_map(|v| v.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|part| part.len() >= 8)
        .collect();
    values.extend(parts);
    q.cli_ok(&["connector", "credentials", "Shared", "redact"]);
    q.wait_for("the folder indexed redacted", |cs| {
        cs[0]["status"] == "idle"
            && cs[0]["held_back_count"].as_u64() < Some(folder.credentials.len() as u64)
            && cs[0]["embedding"]["pending"].as_u64().unwrap_or(0) == 0
    });
    q.wait_synced();
    for credential in &folder.credentials {
        for query in credential.values.iter().chain([&credential.context]) {
            let body = json!({"query": query, "semantic_search": false, "limit": 50});
            let answer = answered(q, "POST", "/api/v1/search", key, Some(&body));
            assert_no_leak("search, redacted", &without_links(answer.json()), &values);
        }
    }
    // Every indexed document, a page of 100 at a time (semantic search ranks them all).
    let mut hits: Vec<Value> = Vec::new();
    for offset in [0, 100] {
        let body = json!({"query": "notes files configuration", "limit": 100, "offset": offset});
        let page = answered(q, "POST", "/api/v1/search", key, Some(&body)).json();
        hits.extend(page["results"].as_array().cloned().unwrap_or_default());
    }
    let redacted = hits
        .iter()
        .filter(|hit| {
            folder
                .credentials
                .iter()
                .any(|c| hit["path"] == c.path.as_str())
        })
        .count();
    assert!(
        redacted >= 10,
        "{redacted} redacted documents indexed of {}",
        hits.len()
    );
    for hit in &hits {
        let doc = hit["doc_id"].as_str().expect("doc id");
        let base = format!("/api/v1/connectors/{connector}/docs/{doc}");
        let text = answered(q, "GET", &base, key, None);
        assert_eq!(text.status, 200);
        assert_no_leak("document text, redacted", &text.text(), &values);
        let file = answered(q, "GET", &format!("{base}/file"), key, None);
        assert_no_leak("file download, redacted", &file.text(), &values);
    }
}

#[test]
fn the_user_releases_a_file_redacts_or_turns_the_check_off_after_a_warning() {
    let mut q = Quarry::new();
    q.without_model();
    let dir = q.scratch("share");
    let token = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";
    std::fs::write(
        dir.join("deploy-notes.md"),
        format!(
            "Deploy from the build host with GITHUB_TOKEN={token} and check the release page.\n"
        ),
    )
    .expect("write");
    std::fs::write(
        dir.join("fixture.key"),
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vl3XyZqQw8Rk\nQ4eQ0cJt9yPp2Wf6NnH1dK3sL8mT5vX2aB7cE4gF1hJ6kM9oP0qR3sT2uV5wY8zA\n-----END PRIVATE KEY-----\n",
    )
    .expect("write");
    let connector = q.add_folder("Share", &dir);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.start();
    q.wait_synced();
    let search = |words: &str| {
        q.keyword_search(&key, words, 10)["results"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert!(search("build host release").is_empty());
    let status = q.cli_ok(&["connector", "status", "Share"]);
    assert!(status.contains("held back"), "{status}");
    assert!(
        status.contains("deploy-notes.md: holds a GitHub token"),
        "{status}"
    );
    assert!(
        status.contains("fixture.key: a credential: a private key"),
        "{status}"
    );

    // Redacting: the note's text is indexed with the token replaced; its file is not served.
    let said = q.cli_ok(&["connector", "credentials", "Share", "redact"]);
    assert!(said.contains("redacted"), "{said}");
    q.wait_for("the note indexed redacted", |cs| {
        cs[0]["status"] == "idle"
            && cs[0]["held_back_count"] == 1
            && search("build host release").len() == 1
    });
    let hits = search("build host release");
    assert_eq!(hits.len(), 1, "{hits:?}");
    let doc = hits[0]["doc_id"].as_str().expect("doc id");
    let base = format!("/api/v1/connectors/{connector}/docs/{doc}");
    let text = q.request("GET", &base, Some(&key), None);
    assert!(
        text.text().contains("[credential redacted]"),
        "{}",
        text.text()
    );
    assert!(!text.text().contains(token));
    let file = q.request("GET", &format!("{base}/file"), Some(&key), None);
    assert_eq!(file.status, 404, "{}", file.text());
    assert!(!file.text().contains(token));
    assert!(search(token).is_empty());
    // The user's own search page: the redacted text, and no file to download, nor through its
    // own route.
    let admin = sign_in(&q);
    let page = admin.call(
        &q,
        "GET",
        &format!("/admin/v1/connectors/{connector}/docs/{doc}?q=build"),
        None,
    );
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(page.json()["file_served"], false);
    assert!(!page.text().contains(token));
    let original = admin.call(
        &q,
        "GET",
        &format!("/admin/v1/connectors/{connector}/docs/{doc}/file"),
        None,
    );
    assert_eq!(original.status, 404);
    assert!(!original.text().contains(token));

    // Releasing the key file: indexed as it is, whatever it holds.
    let released = q.cli_ok(&["connector", "release", "Share", "fixture.key"]);
    assert!(released.contains("every integration"), "{released}");
    q.wait_for("the key file released", |cs| {
        cs[0]["status"] == "idle"
            && cs[0]["held_back_count"] == 0
            && search("begin private key").len() == 1
    });

    // Off asks first: without a terminal to answer on, only --yes turns it off.
    let refused = q.cli(&["connector", "credentials", "Share", "off"]);
    assert!(!refused.ok);
    assert!(
        refused
            .stderr
            .contains("every integration it is shared with"),
        "{}",
        refused.stderr
    );
    q.cli_ok(&["connector", "credentials", "Share", "off", "--yes"]);
    q.wait_for("the note indexed as it is", |cs| {
        cs[0]["status"] == "idle" && cs[0]["held_back_count"] == 0
    });
    q.wait_for("the token searchable", |_| search(token).len() == 1);
    let listed = q.cli_json(&["connector", "list", "--json"]);
    assert_eq!(listed[0]["credentials"]["mode"], "off");
}

#[test]
fn documents_indexed_before_the_check_leave_the_index_at_the_next_start() {
    let mut q = Quarry::new();
    q.without_model();
    let dir = q.scratch("share");
    let token = format!(
        "xoxb-{}-{}-{}",
        "802417395561", "5930671248826", "Zq8Rt5Wm2Xc9Vb4Nk7Lp3Hs6"
    );
    std::fs::write(dir.join("slack.md"), format!("Bot token: {token}\n")).expect("write");
    std::fs::write(dir.join("plain.md"), "The plain note about the garden.\n").expect("write");
    q.add_folder("Share", &dir);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    // As an older Quarry did: everything indexed as it is.
    q.cli_ok(&["connector", "credentials", "Share", "off", "--yes"]);
    q.start();
    q.wait_synced();
    assert_eq!(
        q.keyword_search(&key, "bot token", 10)["results"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    q.stop();
    // The check on again, and the index never checked with these rules (as an older Quarry's).
    let runtime = tokio::runtime::Runtime::new().expect("tokio");
    runtime.block_on(async {
        let store = quarry_store::Store::open(&q.data_dir().join("quarry.db"), &q.keys_dir())
            .await
            .expect("store");
        store
            .set_credential_mode("Share", quarry_store::CredentialMode::Hold, 0)
            .await
            .expect("mode");
        store.set_credential_rules_checked(0).await.expect("rules");
        store.close().await;
    });
    q.start();
    // Before anything is served, the document left the index, and the start says so once.
    assert!(
        q.keyword_search(&key, "bot token", 10)["results"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    assert!(
        q.stdout().contains("1 document(s) already indexed hold credentials and were removed from the index (1 in Share)"),
        "{}",
        q.stdout()
    );
    assert_eq!(
        q.keyword_search(&key, "garden", 10)["results"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    q.wait_synced();
    q.stop();
    q.start();
    assert!(
        !q.stdout().contains("already indexed hold credentials"),
        "{}",
        q.stdout()
    );
}

#[test]
fn a_copy_of_the_data_folder_in_a_shared_folder_is_left_out_and_signs_nothing_in() {
    let mut q = Quarry::new();
    q.without_model();
    let share = q.scratch("share");
    std::fs::write(
        share.join("notes.md"),
        "Backups of the laptop run every night.\n",
    )
    .expect("write");
    q.add_folder("Share", &share);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.start();
    q.wait_synced();
    let token = q
        .printed_admin_token()
        .expect("the first start shows the token");
    q.stop();
    // A plain copy of the data folder, as a backup makes it, inside the shared folder; and one
    // of an older Quarry's, with its admin token and sealing key in clear.
    let copy = share.join("Backups/quarry-copy");
    copy_dir(q.data_dir(), &copy);
    let old = share.join("Backups/old-quarry");
    copy_dir(q.data_dir(), &old);
    std::fs::write(
        old.join("admin-token"),
        "c0ffee0123456789c0ffee0123456789c0ffee0123456789c0ffee0123456789\n",
    )
    .expect("write");
    std::fs::write(
        old.join("secret.key"),
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
    )
    .expect("write");
    q.start();
    q.cli_ok(&["connector", "sync", "Share", "--wait"]);
    for query in [
        "c0ffee0123456789c0ffee0123456789c0ffee0123456789c0ffee0123456789",
        "quarry db",
        "server url",
        "quarry format",
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
    ] {
        let found = q.keyword_search(&key, query, 10);
        assert!(
            paths(&found).iter().all(|p| !p.starts_with("Backups/")),
            "{query}: {found}"
        );
    }
    let connector = &q.connectors()[0];
    assert_eq!(connector["doc_count"], 1, "only the note: {connector}");
    // The live token is in none of them, and what they hold signs nobody in.
    for dir in [&copy, &old] {
        for file in quarry_tests::corpus::files_under(dir) {
            let bytes = std::fs::read(&file).unwrap_or_default();
            assert!(
                !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
                "{}",
                file.display()
            );
        }
    }
    let signed = q.raw(&quarry_tests::http::build(
        "POST",
        "/settings/login",
        &q.addr,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"token=c0ffee0123456789c0ffee0123456789c0ffee0123456789c0ffee0123456789",
    ));
    assert_eq!(signed.status, 401);
}

#[test]
fn hard_links_to_quarrys_own_files_in_a_shared_folder_are_left_out_and_counted() {
    let mut q = Quarry::new();
    let share = q.scratch("share");
    std::fs::write(
        share.join("notes.md"),
        "The garden needs water on Tuesdays.\n",
    )
    .expect("write");
    q.add_folder("Share", &share);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    // What a hard-link backup of the home folder makes: the same files under other names, of
    // each of Quarry's folders on this file system (the data folder, its index, the keys, the
    // component cache, the plugins; the model too where it shares the device).
    // The server gets a component cache of its own, the shared one's files under new names: a
    // test running beside this one may replace a shared file (a compile stored again), which
    // would leave a link to it pointing at a file that is no longer Quarry's.
    let own_cache = q.scratch("component-cache");
    for entry in std::fs::read_dir(quarry_tests::component_cache())
        .expect("component cache")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
    {
        let to = own_cache.join(entry.file_name());
        if std::fs::hard_link(entry.path(), &to).is_err() {
            // A file replaced while copied is copied whole from one inode or the other.
            let _ = std::fs::copy(entry.path(), &to);
        }
    }
    let cache_env = own_cache.to_str().expect("utf-8 path").to_owned();
    q.start_with_env(&[("QUARRY_COMPONENT_CACHE", &cache_env)]);
    q.wait_synced();
    q.stop();
    let sealing = std::fs::read_dir(q.keys_dir())
        .expect("keys")
        .flatten()
        .next()
        .expect("a key")
        .path();
    let index_file = std::fs::read_dir(q.data_dir().join("index"))
        .expect("index")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_file())
        .expect("an index file");
    // The smallest: one over the folder plugin's size limit is not read at all.
    let cache_file = std::fs::read_dir(&own_cache)
        .expect("component cache")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
        .filter_map(|e| Some((e.metadata().ok()?.len(), e.path())))
        .min()
        .expect("a compiled component")
        .1;
    let own_files = [
        sealing.clone(),
        q.data_dir().join("quarry.db"),
        q.data_dir().join("server-url"),
        index_file,
        cache_file,
        quarry_tests::plugins_dir().join("folder/quarry-plugin.toml"),
        quarry_tests::model_dir().join("tokenizer.json"),
    ];
    let links = share.join("snapshot");
    std::fs::create_dir(&links).expect("mkdir");
    let mut linked = Vec::new();
    for (i, file) in own_files.iter().enumerate() {
        // Another file system cannot hold a hard link: those are left aside.
        if std::fs::hard_link(file, links.join(format!("own-{i}.txt"))).is_ok() {
            linked.push(format!("snapshot/own-{i}.txt"));
        }
    }
    assert!(
        linked.len() >= 4,
        "the data folder's and the keys' files at least: {linked:?}"
    );
    let sealing_key = std::fs::read_to_string(&sealing).expect("key");
    q.start_with_env(&[("QUARRY_COMPONENT_CACHE", &cache_env)]);
    q.wait_synced();
    let found = q.keyword_search(&key, sealing_key.trim(), 10);
    assert!(paths(&found).is_empty(), "{found}");
    assert_eq!(paths(&q.keyword_search(&key, "garden", 10)), ["notes.md"]);
    let status = q.cli_json(&["connector", "status", "Share", "--json"]);
    let held: Vec<(String, String)> = status["held_back"]["documents"]
        .as_array()
        .expect("held back")
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap_or_default().to_owned(),
                d["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let paths: Vec<&str> = held.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, linked, "every link is held back");
    for (_, reason) in &held {
        assert!(
            reason.contains("left out: a link to one of Quarry's own files"),
            "{reason}"
        );
    }
}

#[test]
fn an_alias_of_the_data_folder_is_refused_when_added_and_when_its_grant_is_loaded() {
    let mut q = Quarry::new();
    q.without_model();
    let alias = q.scratch("alias");
    let later = q.scratch("later");
    std::fs::write(later.join("notes.md"), "Ordinary notes.\n").expect("write");
    q.cli_ok(&["integration", "list"]); // makes the data folder
    q.add_folder("Later", &later);
    // In a mount namespace of the test's, `alias` (then `later`) is the data folder itself.
    let command = quarry_tests::quarry::in_mount_namespace(
        "mount --bind \"$1\" \"$2\" && mount --bind \"$1\" \"$3\"",
        &[q.data_dir(), &alias, &later],
    );
    q.run_through(&command.iter().map(String::as_str).collect::<Vec<_>>());
    let added = q.cli(&[
        "connector",
        "add",
        "folder",
        &alias.to_string_lossy(),
        "--name",
        "Alias",
    ]);
    assert!(!added.ok, "{}", added.stdout);
    assert!(
        added.stderr.contains("one of Quarry's own folders"),
        "{}",
        added.stderr
    );
    // A grant stored before its folder became an alias fails to load, saying why.
    let synced = q.cli(&["connector", "sync", "Later", "--wait"]);
    assert!(!synced.ok, "{}", synced.stdout);
    assert!(
        format!("{}{}", synced.stdout, synced.stderr).contains("one of Quarry's own folders"),
        "{}\n{}",
        synced.stdout,
        synced.stderr
    );
}

/// Copies `from` to `to` as `cp -r` does (files and folders; links left out).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read").flatten() {
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("type");
        if kind.is_dir() {
            copy_dir(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}
