//! Hostile clients, against the real binary: answers stay small whatever a request holds, many
//! parallel requests get answers in the contract (200 or 429, never 5xx), slow readers cannot
//! hold the service, sign-in bodies are small, and SIGTERM stops the server within 5 s.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quarry_tests::corpus;
use quarry_tests::http;
use quarry_tests::quarry::Quarry;
use serde_json::json;

#[test]
fn an_error_answer_stays_small_whatever_the_request_holds() {
    let mut q = Quarry::new();
    q.serve_folders(&[("Notes", corpus::notes())]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    // The probe of the issue: 200,000 unknown names in a body of about a megabyte.
    let names: Vec<String> = (0..200_000).map(|i| format!("x{}", i % 7)).collect();
    let body = json!({"query": "revenue", "connector_names_filter": names});
    assert!(body.to_string().len() < 1 << 20, "within the body limit");
    let answer = q.search(&key, body);
    assert_eq!(answer.status, 400);
    assert!(answer.body.len() < 4096, "{} bytes", answer.body.len());
    let error = &answer.json()["error"];
    assert_eq!(error["code"], "REQUEST_VALIDATION_FAILED");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown connector")),
        "{error}"
    );
    assert!(error["details"].as_array().is_some_and(|d| d.len() <= 20));

    // Thousands of unknown fields with long names, and long unknown query parameters.
    let mut object = serde_json::Map::new();
    for i in 0..10_000 {
        object.insert(format!("{}{i}", "f".repeat(40)), json!(i));
    }
    let answer = q.search(&key, serde_json::Value::Object(object));
    assert_eq!(answer.status, 400);
    assert!(answer.body.len() < 8192, "{} bytes", answer.body.len());
    let details = answer.json()["error"]["details"].clone();
    assert_eq!(details.as_array().map(Vec::len), Some(20), "{details}");
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("more problem(s) not listed")),
        "{}",
        answer.text()
    );
    let long = "p".repeat(6000);
    let answer = q.request(
        "GET",
        &format!("/api/v1/connectors?{long}=1&{long}2=1"),
        Some(&key),
        None,
    );
    assert_eq!(answer.status, 400);
    assert!(answer.body.len() < 4096, "{} bytes", answer.body.len());
}

#[test]
fn a_thousand_parallel_searches_from_ten_integrations_get_200_or_429_never_5xx() {
    let mut q = Quarry::new();
    q.serve_folders(&[("Notes", corpus::notes())]);
    let keys: Vec<String> = (0..10)
        .map(|i| q.integration(&format!("Agent {i}"), "all", &["--quota", "unlimited"]))
        .collect();
    let q = Arc::new(q);
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let threads: Vec<_> = (0..1000)
        .map(|i| {
            let (q, statuses) = (q.clone(), statuses.clone());
            let key = keys[i % keys.len()].clone();
            std::thread::spawn(move || {
                let semantic = i % 2 == 0;
                let answer = q.search(
                    &key,
                    json!({"query": "quarterly revenue", "semantic_search": semantic}),
                );
                let retry = answer.header("retry-after").map(str::to_owned);
                let code = answer.json()["error"]["code"].as_str().map(str::to_owned);
                statuses
                    .lock()
                    .expect("statuses")
                    .push((answer.status, retry, code));
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a client thread");
    }
    let statuses = statuses.lock().expect("statuses");
    let ok = statuses.iter().filter(|(s, ..)| *s == 200).count();
    let limited = statuses.iter().filter(|(s, ..)| *s == 429).count();
    println!(
        "1000 parallel searches: {ok} answered, {limited} refused with 429, in {:?}",
        started.elapsed()
    );
    assert_eq!(ok + limited, 1000, "only 200 and 429: {statuses:?}");
    assert!(ok >= 80, "each integration got answers: {ok}");
    for (status, retry, code) in statuses.iter().filter(|(s, ..)| *s == 429) {
        assert!(retry.is_some(), "429 carries Retry-After ({status})");
        assert_eq!(code.as_deref(), Some("QUOTA_EXCEEDED"));
    }
    // Afterwards the service answers as before.
    let answer = q.search(&keys[0], json!({"query": "revenue"}));
    assert_eq!(answer.status, 200, "{}", answer.text());
}

/// A client that asks for a file and then reads one byte a second.
struct SlowReader {
    stream: TcpStream,
}

impl SlowReader {
    fn start(addr: &str, path: &str, key: &str) -> SlowReader {
        let mut stream = TcpStream::connect(addr).expect("connect");
        // A small receive window, so the server's writes block early.
        let request = http::build(
            "GET",
            path,
            addr,
            &[("Authorization", &format!("Bearer {key}"))],
            b"",
        );
        stream.write_all(&request).expect("send");
        stream
            .set_read_timeout(Some(Duration::from_secs(1)))
            .expect("timeout");
        SlowReader { stream }
    }

    /// Reads one byte; false once the server closed the connection.
    fn trickle(&mut self) -> bool {
        let mut byte = [0u8; 1];
        !matches!(self.stream.read(&mut byte), Ok(0))
    }
}

#[test]
fn slow_downloads_leave_syncs_searches_and_new_downloads_working_and_sigterm_stops_within_5s() {
    let mut q = Quarry::new();
    let dir = q.scratch("big");
    // A file larger than what the sockets' buffers hold, which a reader taking a byte a second
    // never finishes (over the text limit too: it is listed, not extracted).
    let big: Vec<u8> = (0..40u32 << 20).map(|i| b'a' + (i % 26) as u8).collect();
    std::fs::write(dir.join("big-0.txt"), &big).expect("write");
    std::fs::write(
        dir.join("small.txt"),
        "a small file about quarterly revenue\n",
    )
    .expect("w");
    let connector = q.add_folder("Big", &dir);
    let keys: Vec<String> = (0..5)
        .map(|i| q.integration(&format!("Slow {i}"), "all", &["--quota", "unlimited"]))
        .collect();
    let fresh = q.integration("Fresh", "all", &["--quota", "unlimited"]);
    // Stalled downloads are ended after 2 s here (20 s by default), to keep the test short.
    q.start_with_env(&[("QUARRY_DOWNLOAD_STALL_SECONDS", "2")]);
    q.wait_synced();
    let doc_of = |name: &str| -> String {
        let hits = q.search(
            &fresh,
            json!({"query": name, "semantic_search": false, "limit": 10}),
        );
        hits.json()["results"]
            .as_array()
            .expect("results")
            .iter()
            .find(|h| h["title"] == name)
            .and_then(|h| h["doc_id"].as_str())
            .expect("the file is indexed")
            .to_owned()
    };
    let big_doc = doc_of("big-0.txt");
    let big_path = format!("/api/v1/connectors/{connector}/docs/{big_doc}/file");

    // 100 slow readers, 20 per integration: most are refused at once (429), the rest stall.
    let mut readers: Vec<SlowReader> = (0..100)
        .map(|i| SlowReader::start(&q.addr, &big_path, &keys[i % keys.len()]))
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    for reader in &mut readers {
        reader.trickle();
    }

    // Meanwhile: searches answer, a new download completes, a sync runs.
    let started = Instant::now();
    let search = q.search(&fresh, json!({"query": "quarterly revenue"}));
    assert_eq!(search.status, 200, "{}", search.text());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The stalled downloads are ended after 2 s; downloads are admitted again after that.
    std::thread::sleep(Duration::from_secs(3));
    let small = doc_of("small.txt");
    let download = q.request(
        "GET",
        &format!("/api/v1/connectors/{connector}/docs/{small}/file"),
        Some(&fresh),
        None,
    );
    assert_eq!(download.status, 200, "{}", download.text());
    assert_eq!(download.text(), "a small file about quarterly revenue\n");
    std::fs::write(dir.join("new.txt"), "a new note about the offsite\n").expect("write");
    q.wait_for("the new file is synced", |cs| cs[0]["doc_count"] == 3);

    // New slow readers hold downloads again; SIGTERM stops the server anyway.
    let mut holding: Vec<SlowReader> = (0..20)
        .map(|i| SlowReader::start(&q.addr, &big_path, &keys[i % keys.len()]))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    for reader in &mut holding {
        reader.trickle();
    }
    let took = q.stop();
    println!("stopped {took:?} after SIGTERM with slow downloads open");
    assert!(took < Duration::from_secs(5), "stopped in {took:?}");
}

#[test]
fn the_sign_in_form_reads_only_a_small_body() {
    let mut q = Quarry::new();
    q.start();
    let sign_in = |form: &str| {
        q.raw(&http::build(
            "POST",
            "/settings/login",
            &q.addr,
            &[("Content-Type", "application/x-www-form-urlencoded")],
            form.as_bytes(),
        ))
    };
    let answer = sign_in("");
    assert_eq!(answer.status, 400, "an empty form: {}", answer.status);
    let answer = sign_in(&format!("token={}", "a".repeat(1 << 20)));
    assert_eq!(answer.status, 413, "{}", answer.text());
    let answer = sign_in(&format!("token={}", q.admin_token()));
    assert_eq!(answer.status, 200, "{}", answer.text());
}

/// Raises this test process's own limit on open files to its hard limit (at most 8192): the
/// flood below holds a thousand sockets.
fn raise_own_descriptor_limit() {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("limits");
    let hard = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(4))
        .and_then(|h| h.parse::<u64>().ok())
        .unwrap_or(4096)
        .min(8192);
    let raised = std::process::Command::new("prlimit")
        .args([
            "--pid",
            &std::process::id().to_string(),
            &format!("--nofile={hard}:{hard}"),
        ])
        .status()
        .expect("prlimit runs");
    assert!(raised.success());
}

/// Whether the server closed `stream` (or cut it) within `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let _ = stream.set_read_timeout(Some(limit));
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => {
                return !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
            }
        }
    }
}

#[test]
fn a_thousand_idle_and_half_sent_connections_leave_searches_and_syncs_working_and_are_cut_off() {
    raise_own_descriptor_limit();
    let mut q = Quarry::new();
    q.without_model();
    let notes = q.scratch("notes");
    std::fs::write(notes.join("first.txt"), "the orchard plan for spring\n").expect("write");
    q.add_folder("Notes", &notes);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    // A process with few descriptors, so that a thousand connections would spend them all.
    q.run_through(&["prlimit", "--nofile=256:256"]);
    q.start();
    q.wait_synced();

    let mut flood = Vec::new();
    for i in 0..1000 {
        let mut stream = TcpStream::connect(&q.addr).expect("connect");
        if i % 2 == 1 {
            // Half a header, never finished.
            let _ = stream.write_all(b"POST /api/v1/search HTTP/1.1\r\nHost: x\r\nContent-Le");
        }
        flood.push(stream);
    }
    let opened = Instant::now();
    // Searches are answered meanwhile, at once (an idle connection makes room for each).
    for _ in 0..10 {
        let started = Instant::now();
        let found = q.keyword_search(&key, "orchard", 5);
        assert_eq!(
            found["results"].as_array().map(Vec::len),
            Some(1),
            "{found}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
    // And the watcher's sync indexes a new file.
    std::fs::write(notes.join("second.txt"), "the greenhouse needs new glass\n").expect("write");
    q.wait_for("the new file indexed", |_| {
        q.keyword_search(&key, "greenhouse", 5)["results"]
            .as_array()
            .is_some_and(|r| r.len() == 1)
    });
    // Every flood connection is closed by the header deadline (10 s from when the server took
    // it), or earlier to make room.
    let deadline = opened + Duration::from_secs(13);
    let mut open = 0;
    for stream in &mut flood {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(10));
        if !closed_within(stream, left) {
            open += 1;
        }
    }
    assert_eq!(open, 0, "connections still open 13 s after the last came");
    let log = q.log();
    assert!(!log.contains("Too many open files"), "{log}");
    assert!(!log.contains("sync failed"), "{log}");
}

#[test]
fn mcp_requests_with_a_bad_key_cost_a_line_of_log_each_and_are_rate_limited_before_the_protocol() {
    let mut q = Quarry::new();
    q.without_model();
    q.start();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    let mcp_headers = [("accept", "application/json, text/event-stream")];
    let huge_name = "t".repeat(1_000_000);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": huge_name, "arguments": {}}});
    let before = q.log().len();
    let mut statuses = Vec::new();
    for _ in 0..100 {
        let answer = q.request_with(
            "POST",
            "/mcp",
            Some("qry_bogus_key_0000"),
            Some(&call),
            &mcp_headers,
        );
        assert!(answer.body.len() < 4096, "{} bytes", answer.body.len());
        statuses.push(answer.status);
    }
    let grown = q.log().len() - before;
    assert!(grown < 100 << 10, "the log grew by {grown} bytes");
    // Within the rate of refusals such a call reaches the protocol (a tool error or an unknown
    // tool, answered in a few bytes); beyond it, 429 before the protocol.
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&429),
        "bad keys past their rate get 429: {statuses:?}"
    );
    // A flood of listings with a bogus key is limited the same way.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let listed: Vec<u16> = (0..300)
        .map(|_| {
            q.request_with("POST", "/mcp", Some("bogus"), Some(&list), &mcp_headers)
                .status
        })
        .collect();
    assert!(
        listed.iter().filter(|s| **s == 429).count() >= 100,
        "{listed:?}"
    );
    // A valid key naming a huge tool: the answer and the log repeat a bounded part of it.
    let before = q.log().len();
    let answer = q.request_with("POST", "/mcp", Some(&key), Some(&call), &mcp_headers);
    assert!(
        answer.body.len() < 4096,
        "{} bytes: {}",
        answer.body.len(),
        &answer.text()[..200]
    );
    assert!(q.log().len() - before < 4096, "{}", q.log().len() - before);
}
