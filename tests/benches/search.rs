//! Search latency and throughput through the HTTP API of the real server, beside the same
//! queries run directly on the index in this process (the floor), and through the MCP `search`
//! tool at `/mcp` beside REST (aim: within 1.2x at p50), over a generated corpus.
//!
//! `make bench` runs it (release build). `QUARRY_BENCH_DOCS` sets the corpus size (default
//! 50000), `QUARRY_BENCH_CLIENTS` the concurrent clients (default 8).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_core::{ConnectorId, DocId, DocMeta};
use quarry_index::{
    DocInfo, Filters, IndexDoc, Ranking, SearchIndex, SearchRequest, SortBy, SortOrder, WriteBatch,
};
use quarry_store::{ConnectorGrant, NewConnector, Store};
use quarry_tests::bench::env_or;
use quarry_tests::generated::vocabulary;
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::{Value, json};

const DAY_MS: i64 = 86_400_000;
const START_MS: i64 = 1_735_689_600_000; // 2025-01-01

fn main() {
    let docs: usize = env_or("QUARRY_BENCH_DOCS", 50_000);
    let clients: usize = env_or("QUARRY_BENCH_CLIENTS", 8);
    let words = vocabulary(5000);
    let mut q = Quarry::new();
    let empty = q.scratch("unused");
    let connector = prepare(&q, &empty);
    let connector = ConnectorId::parse(connector).expect("id");

    let started = Instant::now();
    {
        let index = SearchIndex::open(&q.data_dir().join("index"), true).expect("index");
        let mut rng = Rng(42);
        let exts = ["md", "txt", "pdf", "docx", "html"];
        for chunk in (0..docs).collect::<Vec<_>>().chunks(2000) {
            let upserts = chunk
                .iter()
                .map(|&i| {
                    let title: Vec<&str> = (0..4)
                        .map(|_| words[rng.zipf(words.len())].as_str())
                        .collect();
                    let body: Vec<&str> = (0..150)
                        .map(|_| words[rng.zipf(words.len())].as_str())
                        .collect();
                    let ext = exts[i % exts.len()];
                    IndexDoc {
                        info: DocInfo {
                            connector: connector.clone(),
                            doc_id: DocId::parse(format!("d{i}")).expect("id"),
                            meta: DocMeta {
                                title: format!("{}.{ext}", title.join(" ")),
                                path: Some(format!("folder{}/{}.{ext}", i % 50, title.join(" "))),
                                url: None,
                                mime_type: "text/plain".into(),
                                size_bytes: 1000,
                                update_time_ms: START_MS + (rng.next_u64() % 600) as i64 * DAY_MS,
                            },
                        },
                        text: body.join(" "),
                        page_starts: vec![],
                        metadata: vec![],
                        embedding: None,
                    }
                })
                .collect();
            index
                .write(WriteBatch {
                    upserts,
                    ..WriteBatch::default()
                })
                .expect("write");
        }
    }
    println!(
        "search bench: {docs} generated documents indexed in {:.1} s; {clients} concurrent clients",
        started.elapsed().as_secs_f64()
    );

    let queries = queries(&words);
    let key = q.integration("Bench", "all", &["--quota", "unlimited"]);
    // The bench measures latency, not the per-integration rate bound.
    q.start_with_env(&[("QUARRY_RATE_LIMIT", "100000")]);

    // The floor: the same queries on the index, in this process.
    let index = Arc::new(SearchIndex::open(&q.data_dir().join("index"), false).expect("reader"));
    let direct = |body: &Value| {
        let request = to_request(body, &connector);
        let started = Instant::now();
        let results = index.search(&request).expect("search");
        std::hint::black_box(results);
        started.elapsed()
    };
    let http = {
        let addr = q.addr.clone();
        let key = key.clone();
        move |client: &mut Client, body: &Value| {
            let started = Instant::now();
            let (status, _) = client.post(&addr, &key, "/api/v1/search", &body.to_string(), "");
            assert_eq!(status, 200);
            started.elapsed()
        }
    };
    // The same search as an MCP tool call, as an agent's MCP client sends it.
    let mcp = {
        let addr = q.addr.clone();
        let key = key.clone();
        move |client: &mut Client, body: &Value| {
            let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "search", "arguments": body}});
            let headers = "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n";
            let started = Instant::now();
            let (status, answer) = client.post(&addr, &key, "/mcp", &call.to_string(), headers);
            let elapsed = started.elapsed();
            assert_eq!(status, 200);
            let answer: Value = serde_json::from_slice(&answer).expect("a JSON-RPC answer");
            assert_eq!(answer["result"]["isError"], false, "{answer}");
            elapsed
        }
    };

    // Warm both paths.
    for body in &queries {
        direct(body);
    }
    let mut warm = Client::default();
    for body in &queries {
        http(&mut warm, body);
        mcp(&mut warm, body);
    }

    let rounds = 5;
    let direct_single = measure(1, rounds, &queries, || (), |_, body| direct(body));
    let direct_loaded = measure(clients, rounds, &queries, || (), |_, body| direct(body));
    let http_single = measure(1, rounds, &queries, Client::default, &http);
    let http_loaded = measure(clients, rounds, &queries, Client::default, &http);
    let mcp_single = measure(1, rounds, &queries, Client::default, &mcp);
    let mcp_loaded = measure(clients, rounds, &queries, Client::default, &mcp);

    println!(
        "{:<40} {:>9} {:>9} {:>10}",
        "path", "p50 ms", "p99 ms", "req/s"
    );
    for (name, m) in [
        ("direct on the index, 1 client", &direct_single),
        ("HTTP API, 1 client", &http_single),
        (
            &*format!("direct on the index, {clients} clients"),
            &direct_loaded,
        ),
        (&*format!("HTTP API, {clients} clients"), &http_loaded),
        ("MCP search tool, 1 client", &mcp_single),
        (&*format!("MCP search tool, {clients} clients"), &mcp_loaded),
    ] {
        println!(
            "{name:<40} {:>9.2} {:>9.2} {:>10.0}",
            m.p50_ms, m.p99_ms, m.per_second
        );
    }
    ratio(
        "HTTP / direct",
        (&http_single, &direct_single),
        (&http_loaded, &direct_loaded),
        clients,
        "",
    );
    ratio(
        "MCP / REST search",
        (&mcp_single, &http_single),
        (&mcp_loaded, &http_loaded),
        clients,
        "; aim: p50 within 1.2x",
    );
}

/// Prints how path `a` compares with path `b`, with one client and with `clients`.
fn ratio(
    what: &str,
    (a, b): (&Measurement, &Measurement),
    (a_loaded, b_loaded): (&Measurement, &Measurement),
    clients: usize,
    aim: &str,
) {
    println!(
        "ratio {what}: p50 {:.2}x, p99 {:.2}x, throughput {:.2}x (1 client); p50 {:.2}x, throughput {:.2}x ({clients} clients){aim}",
        a.p50_ms / b.p50_ms,
        a.p99_ms / b.p99_ms,
        a.per_second / b.per_second,
        a_loaded.p50_ms / b_loaded.p50_ms,
        a_loaded.per_second / b_loaded.per_second,
    );
}

/// A store with one connector whose plugin is not installed (its sync fails at once and leaves
/// the generated index alone); returns its id.
fn prepare(q: &Quarry, folder: &std::path::Path) -> String {
    let runtime = tokio::runtime::Runtime::new().expect("tokio");
    runtime.block_on(async {
        std::fs::create_dir_all(q.data_dir()).expect("data dir");
        let store = Store::open(&q.data_dir().join("quarry.db"), &q.keys_dir())
            .await
            .expect("store");
        let connector = store
            .add_connector(
                &NewConnector {
                    name: "Generated".into(),
                    plugin_id: "generated".into(),
                    plugin_version: "0".into(),
                    config: BTreeMap::from([(
                        "folder".into(),
                        folder.to_string_lossy().into_owned(),
                    )]),
                    grant: ConnectorGrant::default(),
                    secret_keys: Default::default(),
                },
                quarry_store::now_ms(),
            )
            .await
            .expect("connector");
        store.close().await;
        connector.id.to_string()
    })
}

/// 200 queries: frequent and rare words, one to three of them, phrases, filters, time sorts.
fn queries(words: &[String]) -> Vec<Value> {
    let mut rng = Rng(7);
    (0..200)
        .map(|i| {
            let n = 1 + i % 3;
            let picked: Vec<&str> = (0..n)
                .map(|_| words[rng.zipf(words.len() / 4)].as_str())
                .collect();
            let mut body =
                json!({"query": picked.join(" "), "limit": 10, "semantic_search": false});
            match i % 10 {
                7 => body["query"] = json!(format!("\"{} {}\"", picked[0], words[rng.zipf(50)])),
                8 => body["file_extensions_filter"] = json!(["pdf", "md"]),
                9 => {
                    body["sort_by"] = json!("update_time");
                    body["update_time_filter"] = json!({"from": "2025-06-01"});
                }
                _ => {}
            }
            body
        })
        .collect()
}

fn to_request(body: &Value, connector: &ConnectorId) -> SearchRequest {
    SearchRequest {
        query: body["query"].as_str().unwrap_or_default().to_owned(),
        filters: Filters {
            connectors: vec![connector.clone()],
            updated_from_ms: body["update_time_filter"]["from"]
                .as_str()
                .map(|_| START_MS + 151 * DAY_MS),
            updated_to_ms: None,
            extensions: body["file_extensions_filter"].as_array().map(|a| {
                a.iter()
                    .filter_map(|e| e.as_str().map(str::to_owned))
                    .collect()
            }),
        },
        sort_by: if body["sort_by"] == "update_time" {
            SortBy::UpdateTime
        } else {
            SortBy::Relevance
        },
        order: SortOrder::Descending,
        offset: 0,
        limit: 10,
        ranking: Ranking::Keyword,
    }
}

struct Measurement {
    p50_ms: f64,
    p99_ms: f64,
    per_second: f64,
}

fn summarize(mut latencies: Vec<Duration>, wall: Duration) -> Measurement {
    latencies.sort();
    let at = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    Measurement {
        p50_ms: at(0.50).as_secs_f64() * 1e3,
        p99_ms: at(0.99).as_secs_f64() * 1e3,
        per_second: latencies.len() as f64 / wall.as_secs_f64(),
    }
}

/// Runs every query `rounds` times, spread over `threads` clients, each with its own state
/// (a connection, say), and summarizes the latencies.
fn measure<S>(
    threads: usize,
    rounds: usize,
    queries: &[Value],
    state: impl Fn() -> S + Sync,
    run: impl Fn(&mut S, &Value) -> Duration + Sync,
) -> Measurement {
    let started = Instant::now();
    let latencies: Vec<Duration> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (state, run) = (&state, &run);
                scope.spawn(move || {
                    let mut own = state();
                    let mut out = Vec::new();
                    for r in 0..rounds {
                        for (i, body) in queries.iter().enumerate() {
                            if (i + r) % threads == t {
                                out.push(run(&mut own, body));
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("joins"))
            .collect()
    });
    summarize(latencies, started.elapsed())
}

/// A keep-alive HTTP/1.1 client, as an agent's HTTP library would be.
#[derive(Default)]
struct Client {
    stream: Option<BufReader<TcpStream>>,
}

impl Client {
    /// Posts JSON `body` to `path` with `headers` (complete lines); the status and the body.
    fn post(
        &mut self,
        addr: &str,
        key: &str,
        path: &str,
        body: &str,
        headers: &str,
    ) -> (u16, Vec<u8>) {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let stream = self.stream.get_or_insert_with(|| {
            let s = TcpStream::connect(addr).expect("connect");
            s.set_nodelay(true).expect("nodelay");
            BufReader::new(s)
        });
        stream
            .get_mut()
            .write_all(request.as_bytes())
            .expect("send");
        let mut status_line = String::new();
        stream.read_line(&mut status_line).expect("status");
        let status: u16 = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status code");
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            stream.read_line(&mut line).expect("header");
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().expect("length");
            }
        }
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).expect("body");
        (status, body)
    }
}
