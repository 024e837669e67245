//! The independent MCP clients of the end-to-end tests, the two official SDKs: Python (pinned in
//! `tests/mcp/requirements.txt`, installed by `make setup` in its own virtualenv) runs
//! `tests/mcp/client.py`, TypeScript (pinned in `tests/mcp/ts/package-lock.json`, installed by
//! `make setup` into the tools cache) runs `tests/mcp/client.mjs`. Each connects to Quarry, runs
//! a plan's steps and prints what it saw, in the same shape.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::quarry::Quarry;

/// An official MCP SDK, as the tests drive it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sdk {
    /// The Python SDK (`mcp` on PyPI).
    Python,
    /// The TypeScript SDK (`@modelcontextprotocol/sdk` on npm), behind most desktop and editor
    /// agents; it checks every structured answer against the tool's output schema.
    TypeScript,
}

impl Sdk {
    /// Both SDKs.
    pub const BOTH: [Sdk; 2] = [Sdk::Python, Sdk::TypeScript];

    /// The client process to start.
    fn command(self) -> Command {
        match self {
            Sdk::Python => {
                let mut command = Command::new(python());
                command.arg(client_script());
                command
            }
            Sdk::TypeScript => {
                let sdk = typescript_sdk();
                let mut command = Command::new("node");
                command
                    .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp/client.mjs"))
                    .env("QUARRY_MCP_TS", sdk);
                command
            }
        }
    }
}

/// Where `make setup` installed the TypeScript SDK: `$QUARRY_MCP_TS` (the Makefile sets it),
/// else the default under `~/.cache/quarry`. Panics with the fix when it is not installed.
fn typescript_sdk() -> PathBuf {
    let dir = std::env::var_os("QUARRY_MCP_TS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/quarry/tools/mcp-ts"))
        })
        .unwrap_or_else(|| PathBuf::from("mcp-ts"));
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "no MCP TypeScript SDK in {}: run `make setup` (or `make test`, which runs it)",
        dir.display()
    );
    dir
}

/// The virtualenv's Python: `$QUARRY_MCP_PY/bin/python` (the Makefile sets it), else the
/// default under `~/.cache/quarry`. Panics with the fix when it is not installed.
pub fn python() -> PathBuf {
    let venv = std::env::var_os("QUARRY_MCP_PY")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/quarry/tools/mcp-py"))
        })
        .unwrap_or_else(|| PathBuf::from("mcp-py"));
    let python = venv.join("bin/python");
    assert!(
        python.is_file(),
        "no MCP client in {}: run `make setup` (or `make test`, which runs it)",
        venv.display()
    );
    python
}

/// The client script, `tests/mcp/client.py`.
pub fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp/client.py")
}

/// Runs the Python client on `plan` (see `client.py`); its report.
pub fn run(plan: &Value) -> Value {
    run_with(Sdk::Python, plan)
}

/// Runs `sdk`'s client on `plan` (see `client.py`); its report. Panics when it does not end
/// within two minutes or prints no JSON.
pub fn run_with(sdk: Sdk, plan: &Value) -> Value {
    let mut child = sdk
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the MCP client starts");
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(plan.to_string().as_bytes())
            .expect("plan written");
    }
    // Its output is read as it comes: a report larger than a pipe's buffer must not block it.
    let (stdout, stderr) = crate::read_outputs(&mut child);
    let started = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).into_owned();
            panic!(
                "the MCP client ({sdk:?}) did not finish within 120 s; its last words:\n{}",
                &stderr[stderr.floor_char_boundary(stderr.len().saturating_sub(4000))..]
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = std::process::Output {
        status: child.wait().expect("client status"),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the MCP client ({sdk:?}) printed no JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A plan over Streamable HTTP to `q`'s `/mcp`, with `key` as the bearer (none when `None`).
pub fn http_plan(q: &Quarry, key: Option<&str>, steps: Value) -> Value {
    let headers = match key {
        Some(key) => json!({"Authorization": format!("Bearer {key}")}),
        None => json!({}),
    };
    json!({"transport": "http", "url": format!("{}/mcp", q.url()), "headers": headers, "steps": steps})
}

/// A plan over stdio: `quarry mcp` on `q`'s data folder with `key` in `QUARRY_API_KEY`.
pub fn stdio_plan(q: &Quarry, key: &str, steps: Value) -> Value {
    let (program, args, mut env) = q.invocation(&["mcp"]);
    env.insert("QUARRY_API_KEY".to_owned(), key.to_owned());
    json!({"transport": "stdio", "command": program, "args": args, "env": env, "steps": steps})
}

/// Runs `steps` with `sdk` over Streamable HTTP to `q` with `key`; their results.
pub fn over_http(sdk: Sdk, q: &Quarry, key: &str, steps: Value) -> Vec<Value> {
    results(&run_with(sdk, &http_plan(q, Some(key), steps)))
}

/// Runs `steps` with `sdk` over stdio (`quarry mcp` on `q`'s data folder) with `key`; their
/// results.
pub fn over_stdio(sdk: Sdk, q: &Quarry, key: &str, steps: Value) -> Vec<Value> {
    results(&run_with(sdk, &stdio_plan(q, key, steps)))
}

/// A step calling `tool` with `arguments`.
pub fn call(tool: &str, arguments: Value) -> Value {
    json!({"op": "call", "tool": tool, "arguments": arguments})
}

/// The results of a report, one per step; panics with the report when the client failed.
pub fn results(report: &Value) -> Vec<Value> {
    report["results"]
        .as_array()
        .unwrap_or_else(|| panic!("the MCP client failed: {report}"))
        .clone()
}

/// The REST error envelope of a tool error result (in `_meta`), after checking that it is a tool
/// error the client read without an exception, with no structured content to break the tool's
/// output schema, and whose text starts with the same code.
pub fn error_envelope(result: &Value) -> &Value {
    assert_eq!(result["isError"], true, "a tool error: {result}");
    assert!(
        result.get("structuredContent").is_none(),
        "a tool error carries no structured content: {result}"
    );
    let envelope = &result["_meta"]["quarry/error"];
    let code = envelope["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no error code in _meta: {result}"));
    let text = result["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with(&format!("{code}: ")),
        "the text starts with the code {code}: {result}"
    );
    envelope
}

/// The error code of a tool error result (see [`error_envelope`]).
pub fn error_code(result: &Value) -> &str {
    error_envelope(result)["error"]["code"]
        .as_str()
        .unwrap_or_default()
}
