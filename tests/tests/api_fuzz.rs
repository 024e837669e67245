//! Thousands of random and malformed requests at the real server. Every HTTP request that parses
//! gets either a success or the error envelope with a code that fits its status, never a 500;
//! bytes that are not HTTP at all get a 4xx or a closed connection; and afterwards the service
//! answers as before, with its database and index intact.

use quarry_tests::corpus;
use quarry_tests::http::{self, Response};
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::{Value, json};

/// Requests of each kind. `QUARRY_FUZZ_CASES` raises it for longer runs.
fn cases() -> usize {
    std::env::var("QUARRY_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

/// Random request parts.
trait Fuzz {
    fn bytes(&mut self, max: usize) -> Vec<u8>;
    fn string(&mut self, max: usize) -> String;
    fn json(&mut self, depth: usize) -> Value;
}

impl Fuzz for Rng {
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    fn string(&mut self, max: usize) -> String {
        let alphabet = [
            "a", "Z", "0", " ", "-", "\"", "\\", "é", "日本", "\u{0}", "\n", "%", "{", "]", "qry_",
            "😀", "revenue", "\u{202e}",
        ];
        let n = self.below(max + 1);
        (0..n).map(|_| *self.pick(&alphabet)).collect()
    }

    fn json(&mut self, depth: usize) -> Value {
        match self.below(if depth > 3 { 6 } else { 8 }) {
            0 => Value::Null,
            1 => json!(self.chance(50)),
            2 => json!(self.next_u64() as i64 >> self.below(63)),
            3 => json!((self.next_u64() as f64) / (self.next_u64() as f64 + 1.0) - 0.5),
            4 => json!(*self.pick(&[0, 1, -1, 100, 101, 10_000, 10_001, i64::MAX, i64::MIN])),
            5 => json!(self.string(40)),
            6 => Value::Array((0..self.below(4)).map(|_| self.json(depth + 1)).collect()),
            _ => {
                let mut object = serde_json::Map::new();
                for _ in 0..self.below(4) {
                    let key = self.pick(&FIELDS).to_string();
                    object.insert(key, self.json(depth + 1));
                }
                Value::Object(object)
            }
        }
    }
}

const FIELDS: [&str; 12] = [
    "query",
    "limit",
    "semantic_search",
    "connector_names_filter",
    "update_time_filter",
    "sort_by",
    "sort_order",
    "offset",
    "file_extensions_filter",
    "from",
    "to",
    "unknown",
];

const CODES: [(&str, &[u16]); 6] = [
    ("UNAUTHORIZED", &[401]),
    ("REQUEST_VALIDATION_FAILED", &[400, 405, 413, 415, 416]),
    ("RESOURCE_NOT_FOUND", &[404]),
    ("QUOTA_EXCEEDED", &[429]),
    ("DATA_SHARING_DECLINED", &[403]),
    ("INTERNAL_ERROR", &[500]),
];

/// Bytes as a valid URL component: letters and digits stay, everything else is `%XX`.
fn percent_encode(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (*b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Checks an answer to a request that was valid HTTP.
fn well_formed(method: &str, request: &str, response: &Response) {
    let context = || format!("{request}\n-> {} {}", response.status, response.text());
    assert_ne!(
        response.status,
        500,
        "client input never causes an internal error: {}",
        context()
    );
    assert!(response.header("x-request-id").is_some(), "{}", context());
    if method == "HEAD" || response.status == 304 {
        return;
    }
    let content_type = response.header("content-type").unwrap_or_default();
    if response.status >= 400 {
        assert_eq!(
            content_type,
            "application/json; charset=utf-8",
            "{}",
            context()
        );
        let body = response.json();
        let code = body["error"]["code"].as_str().unwrap_or_default();
        let statuses = CODES
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, s)| *s)
            .unwrap_or_else(|| panic!("unknown code {code}: {}", context()));
        assert!(
            statuses.contains(&response.status),
            "{code} with {}: {}",
            response.status,
            context()
        );
        assert_eq!(
            body["error"]["request_id"].as_str(),
            response.header("x-request-id")
        );
    } else if content_type.starts_with("application/json") {
        response.json();
    }
}

#[test]
fn random_and_malformed_requests_get_well_formed_answers() {
    let mut q = Quarry::new();
    let connector = q.serve_folders(&[("Notes", corpus::notes())]).remove(0);
    let key = q.integration("Fuzzer", "all", &["--quota", "unlimited"]);
    let reference = json!({"query": "revenue costs", "limit": 100, "semantic_search": false});
    let before = q.search(&key, reference.clone()).json()["results"].clone();
    let doc = before[0]["doc_id"].as_str().expect("a result").to_owned();
    let auth = format!("Bearer {key}");
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);

    let paths = [
        "/api/v1/search".to_owned(),
        "/api/v1/connectors".to_owned(),
        format!("/api/v1/connectors/{connector}/docs/{doc}"),
        format!("/api/v1/connectors/{connector}/docs/{doc}/file"),
        "/api/v1/openapi.json".to_owned(),
        "/healthz".to_owned(),
    ];
    let methods = [
        "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "FOO",
    ];
    let content_types = [
        "application/json",
        "application/json; charset=utf-8",
        "APPLICATION/JSON",
        "text/plain",
        "application/x-www-form-urlencoded",
        "",
        "application/json;;;",
    ];

    // 1. Search bodies: mutated valid ones, random JSON, random bytes, truncated and deep JSON.
    for i in 0..cases() {
        let body: Vec<u8> = match rng.below(5) {
            0 => {
                let mut value = json!({"query": "revenue"});
                for _ in 0..rng.below(4) {
                    let field = rng.pick(&FIELDS).to_string();
                    value[field] = rng.json(0);
                }
                value.to_string().into_bytes()
            }
            1 => rng.json(0).to_string().into_bytes(),
            2 => rng.bytes(300),
            3 => {
                let text = json!({"query": rng.string(30), "limit": rng.below(120)}).to_string();
                let cut = rng.below(text.len());
                text.as_bytes()[..cut].to_vec()
            }
            _ => {
                let depth = 1 + rng.below(5000);
                format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes()
            }
        };
        let content_type = *rng.pick(&content_types);
        let mut headers = vec![("Authorization", auth.as_str())];
        if !content_type.is_empty() {
            headers.push(("Content-Type", content_type));
        }
        let request = http::build("POST", "/api/v1/search", &q.addr, &headers, &body);
        let response = q.raw(&request);
        well_formed(
            "POST",
            &format!("case {i}: body {:?}", String::from_utf8_lossy(&body)),
            &response,
        );
    }

    // 2. Methods, paths, query strings and headers.
    for i in 0..cases() {
        let method = *rng.pick(&methods);
        let mut path = rng.pick(&paths).clone();
        match rng.below(6) {
            0 => {
                // A random segment where an id goes, percent-encoded bytes included.
                let junk = percent_encode(&rng.bytes(40));
                path = format!("/api/v1/connectors/{junk}/docs/{doc}");
            }
            1 => {
                let name = percent_encode(rng.string(10).as_bytes());
                let value = percent_encode(rng.string(10).as_bytes());
                path.push_str(&format!("?{name}={value}"));
            }
            2 => {
                let tails = [
                    "/",
                    "//",
                    "/..",
                    "/%2e%2e",
                    "?page_start=0&max_chars=-1",
                    "?page_start=99999999999999999999",
                ];
                let tail: &&str = rng.pick(&tails);
                path.push_str(tail);
            }
            3 => path = format!("/{}", "a/".repeat(rng.below(600))),
            _ => {}
        }
        let path: String = path
            .chars()
            .filter(|c| !c.is_whitespace() && !c.is_control())
            .collect();
        let mut headers: Vec<(String, String)> = Vec::new();
        if rng.chance(85) {
            let value = match rng.below(6) {
                0 => format!("bearer {key}"),
                1 => format!("Bearer {}", rng.string(60).replace(['\n', '\r', '\0'], "")),
                2 => "Basic Zm9vOmJhcg==".to_owned(),
                3 => format!("Bearer {key} {key}"),
                _ => auth.clone(),
            };
            headers.push(("Authorization".into(), value));
        }
        if rng.chance(40) {
            let range = [
                "bytes=0-0",
                "bytes=-1",
                "bytes=5-2",
                "bytes=0-1,2-3",
                "bytes=999999999-",
                "bytes=x",
                "lines=1-2",
            ];
            headers.push(("Range".into(), rng.pick(&range).to_string()));
        }
        if rng.chance(20) {
            headers.push((
                "If-None-Match".into(),
                rng.string(20).replace(['\n', '\r', '\0'], ""),
            ));
        }
        if rng.chance(20) {
            headers.push((
                format!("X-{}", rng.below(1000)),
                "x".repeat(rng.below(4000)),
            ));
        }
        let body = if rng.chance(30) {
            rng.json(0).to_string().into_bytes()
        } else {
            Vec::new()
        };
        if !body.is_empty() {
            headers.push(("Content-Type".into(), "application/json".into()));
        }
        let borrowed: Vec<(&str, &str)> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let request = http::build(method, &path, &q.addr, &borrowed, &body);
        let response = q.raw(&request);
        well_formed(
            method,
            &format!("case {i}: {method} {path} {headers:?}"),
            &response,
        );
    }

    // 3. Bytes that are not HTTP, or barely: a 4xx or a closed connection, never a hang.
    for i in 0..cases() / 5 {
        let mut request = match rng.below(4) {
            0 => rng.bytes(200),
            1 => format!(
                "GET /{} HTTP/1.1\r\nHost: {}\r\n{}\r\n\r\n",
                rng.string(10),
                q.addr,
                rng.string(50)
            )
            .into_bytes(),
            2 => format!(
                "POST /api/v1/search HTTP/1.1\r\nHost: {}\r\nContent-Length: 99999\r\n\r\n{{",
                q.addr
            )
            .into_bytes(),
            _ => format!(
                "GET /healthz HTTP/1.1\r\nHost: {}\r\nX: {}\r\n\r\n",
                q.addr,
                "y".repeat(100_000)
            )
            .into_bytes(),
        };
        if rng.chance(50) {
            request.extend_from_slice(b"\r\n\r\n");
        }
        match http::send_and_close(&q.addr, &request) {
            Ok(response) => assert!(
                (400..500).contains(&response.status) || response.status < 300,
                "case {i}: {} {}",
                response.status,
                response.text()
            ),
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    std::io::ErrorKind::InvalidData
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::UnexpectedEof
                        | std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                ),
                "case {i}: {e}"
            ),
        }
    }

    // The service is unharmed: same answers, a working database.
    assert_eq!(q.request("GET", "/healthz", None, None).status, 200);
    let after = q.search(&key, reference).json()["results"].clone();
    assert_eq!(after, before, "the index answers as before");
    let integrations = q.cli_json(&["integration", "list", "--json"]);
    assert!(integrations[0]["requests_this_month"].as_u64().unwrap_or(0) > cases() as u64);
    assert!(!q.log().contains("panicked"), "no handler panicked");
}
