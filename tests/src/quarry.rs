//! Runs the real `quarry` binary: CLI commands, and `quarry serve` on a free loopback port, each
//! with its own data folder.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::corpus::{self, FixtureFile};
use crate::http::{self, Response};

/// The `quarry` binary cargo built beside the test binaries.
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binaries live in target/<profile>/deps");
    let bin = dir.join("quarry");
    assert!(
        bin.is_file(),
        "{} is missing: build it with `cargo build -p quarry-server` (make test does)",
        bin.display()
    );
    bin
}

/// Whether this process runs as root (then file permissions do not stop it reading).
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// The command that runs a program in a mount namespace of its own (a user namespace too when
/// not root), after `setup` (shell commands, with `$1`, `$2`... the `args`) ran there: e.g. a
/// bind mount the rest of the machine never sees. Give it to [`Quarry::run_through`].
pub fn in_mount_namespace(setup: &str, args: &[&Path]) -> Vec<String> {
    let mut command = vec!["unshare".to_owned()];
    if !running_as_root() {
        command.push("--map-root-user".to_owned());
    }
    command.extend(["--mount", "--", "sh", "-c"].map(str::to_owned));
    let shift = args.len();
    command.push(format!("{setup} && shift {shift} && exec \"$@\""));
    command.push("namespace-setup".to_owned()); // $0
    command.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
    command
}

/// A Quarry data folder, and the server running on it, if started.
pub struct Quarry {
    dir: tempfile::TempDir,
    data_dir: PathBuf,
    server: Option<Child>,
    /// `127.0.0.1:<port>` of the running server.
    pub addr: String,
    /// Run the binary without root's power to read any file (see
    /// [`Quarry::honour_file_permissions`]).
    honour_permissions: bool,
    /// A command the binary runs through ([`Quarry::run_through`]).
    wrapper: Vec<String>,
    /// The embedding model the binary gets ([`Quarry::without_model`], [`Quarry::with_model`]).
    model: Model,
    /// Whether the server reads images with the OCR models (off unless a test asks).
    ocr: bool,
    /// Another build of the binary ([`Quarry::use_binary`]).
    binary: Option<PathBuf>,
    /// The admin token, once made by [`Quarry::admin_token`] (Quarry keeps only its hash).
    admin_token: std::sync::OnceLock<String>,
    /// The team database the binary uses ([`Quarry::on_team_database`]).
    team_database: Option<String>,
}

/// The paths of a search answer's results, in order.
pub fn result_paths(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .map(|results| {
            results
                .iter()
                .filter_map(|hit| hit["path"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Which embedding model a [`Quarry`] runs with.
enum Model {
    /// The default model ([`crate::model_dir`]).
    Default,
    /// None: keyword search only.
    None,
    /// This model folder.
    Dir(PathBuf),
}

/// What a CLI command printed.
pub struct CliOutput {
    /// Whether it succeeded.
    pub ok: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Default for Quarry {
    fn default() -> Self {
        Quarry::new()
    }
}

/// A data folder's database opened read-only, with the runtime its queries run on.
pub struct Database {
    runtime: tokio::runtime::Runtime,
    pool: sqlx::SqlitePool,
}

impl Database {
    /// The connection pool, for a query.
    pub fn pool(&self) -> &sqlx::SqlitePool {
        &self.pool
    }

    /// Waits for `query` (made on [`Database::pool`]) to answer.
    pub fn block_on<T>(&self, query: impl std::future::Future<Output = T>) -> T {
        self.runtime.block_on(query)
    }
}

impl Quarry {
    /// A new, empty data folder; no server yet.
    pub fn new() -> Quarry {
        Quarry::with_data_dir("data")
    }

    /// A new, empty data folder at `rel` inside this Quarry's temporary folder (inside a folder
    /// it will be granted, say); no server yet.
    pub fn with_data_dir(rel: &str) -> Quarry {
        let dir = tempfile::tempdir().expect("temp dir");
        let data_dir = dir.path().join(rel);
        Quarry {
            dir,
            data_dir,
            server: None,
            addr: String::new(),
            honour_permissions: false,
            wrapper: Vec::new(),
            model: Model::Default,
            ocr: false,
            binary: None,
            admin_token: std::sync::OnceLock::new(),
            team_database: None,
        }
    }

    /// Runs the server and the CLI without the embedding model (keyword search only).
    pub fn without_model(&mut self) {
        self.model = Model::None;
    }

    /// Runs the server and the CLI with the OCR models ([`crate::ocr_models_dir`]).
    pub fn with_ocr(&mut self) {
        self.ocr = true;
    }

    /// Runs the server and the CLI with the model folder `dir` instead of the default model.
    pub fn with_model(&mut self, dir: PathBuf) {
        self.model = Model::Dir(dir);
    }

    /// Runs the binary through `command` (its arguments first, then the binary's), e.g. in a
    /// namespace of the test's.
    pub fn run_through(&mut self, command: &[&str]) {
        self.wrapper = command.iter().map(|&c| c.to_owned()).collect();
    }

    /// Makes the binary honour file permissions even when the tests run as root (as in CI):
    /// it runs without the capabilities that let root read any file, so a file without read
    /// permission is unreadable to it as it would be to a user's Quarry.
    pub fn honour_file_permissions(&mut self) {
        self.honour_permissions = true;
    }

    /// A scratch folder for fixtures, inside this Quarry's temporary folder.
    pub fn scratch(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(&path).expect("create scratch folder");
        path
    }

    /// Makes the binary keep its store in the team database at `url` (PostgreSQL) instead of
    /// the data folder's SQLite file.
    pub fn on_team_database(&mut self, url: &str) {
        self.team_database = Some(url.to_owned());
    }

    /// The settings file the binary reads (`$QUARRY_CONFIG`); absent unless the test writes it.
    pub fn config_file(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    /// The data folder's database as it is on disk, opened read-only.
    pub fn database(&self) -> Database {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(self.data_dir().join("quarry.db"))
            .read_only(true);
        let pool = runtime
            .block_on(sqlx::SqlitePool::connect_with(options))
            .expect("the database opens");
        Database { runtime, pool }
    }

    /// The data folder.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The folder of the key that seals password settings (outside the data folder).
    pub fn keys_dir(&self) -> PathBuf {
        self.dir.path().join("keys")
    }

    /// The running server's base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// How to run the binary with `args` as [`Quarry::cli`] does, for another program to run
    /// it: the program, its arguments and the environment it needs.
    pub fn invocation(&self, args: &[&str]) -> (String, Vec<String>, BTreeMap<String, String>) {
        let command = self.command();
        let mut all: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        all.extend(args.iter().map(|&a| a.to_owned()));
        let mut env: BTreeMap<String, String> = command
            .get_envs()
            .filter_map(|(k, v)| {
                Some((
                    k.to_string_lossy().into_owned(),
                    v?.to_string_lossy().into_owned(),
                ))
            })
            .collect();
        if let Some(path) = std::env::var_os("PATH") {
            env.insert("PATH".to_owned(), path.to_string_lossy().into_owned());
        }
        let program = command.get_program().to_string_lossy().into_owned();
        (program, all, env)
    }

    /// Runs another build of `quarry` (a baseline a benchmark measures beside this one) instead
    /// of the one cargo built beside the tests.
    pub fn use_binary(&mut self, path: PathBuf) {
        self.binary = Some(path);
    }

    fn program(&self) -> PathBuf {
        self.binary.clone().unwrap_or_else(binary)
    }

    fn command(&self) -> Command {
        let mut command = if let Some((program, args)) = self.wrapper.split_first() {
            let mut wrapped = Command::new(program);
            wrapped.args(args).arg(self.program());
            wrapped
        } else if self.honour_permissions && running_as_root() {
            let mut setpriv = Command::new("setpriv");
            setpriv
                .args(["--bounding-set", "-dac_override,-dac_read_search"])
                .arg(self.program());
            setpriv
        } else {
            Command::new(self.program())
        };
        command
            .arg("--data-dir")
            .arg(&self.data_dir)
            .env("QUARRY_PLUGINS_DIR", crate::plugins_dir())
            .env("QUARRY_RENDERER", crate::renderer_component())
            .env("QUARRY_COMPONENT_CACHE", crate::component_cache())
            .env(
                "QUARRY_MODEL_DIR",
                match &self.model {
                    Model::Default => crate::model_dir(),
                    Model::None => PathBuf::from("none"),
                    Model::Dir(dir) => dir.clone(),
                },
            )
            .env(
                "QUARRY_OCR_MODELS",
                match self.ocr {
                    true => crate::ocr_models_dir(),
                    false => PathBuf::from("none"),
                },
            )
            .env("QUARRY_ORT_LIB", crate::ort_lib())
            .env("QUARRY_KEYS_DIR", self.keys_dir())
            // A settings file of this test's own (none unless the test writes it): the
            // machine's ~/.config/quarry/config.toml never reaches a test.
            .env("QUARRY_CONFIG", self.config_file())
            // Never the desktop's session bus of the person running the tests: the desktop
            // search's test starts a bus of its own and turns this on.
            .env("QUARRY_DESKTOP_SEARCH", "false")
            .env_remove("QUARRY_DATA_DIR")
            .env_remove("QUARRY_LISTEN")
            .stdin(Stdio::null());
        match &self.team_database {
            Some(url) => command.env("QUARRY_DATABASE", url),
            None => command.env_remove("QUARRY_DATABASE"),
        };
        command.env("QUARRY_HOST_NAME", self.host_name());
        command
    }

    /// This host's name (`--host-name`): one of its own, as every host of a team on one
    /// machine needs.
    pub fn host_name(&self) -> String {
        let dir = self.dir.path().file_name().map(|n| n.to_string_lossy());
        format!("host{}", dir.unwrap_or_default())
    }

    /// Runs a CLI command.
    pub fn cli(&self, args: &[&str]) -> CliOutput {
        self.cli_with_env(args, &[])
    }

    /// Runs a CLI command with `env` added to its environment.
    pub fn cli_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> CliOutput {
        let Output {
            status,
            stdout,
            stderr,
        } = self
            .command()
            .args(args)
            .envs(env.iter().copied())
            .output()
            .expect("quarry runs");
        CliOutput {
            ok: status.success(),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        }
    }

    /// Runs a CLI command, watching its memory: what it printed, and the most memory (resident,
    /// KiB) it was seen to hold. Ends it after `limit` (then it did not succeed).
    pub fn cli_watched(&self, args: &[&str], limit: Duration) -> (CliOutput, u64) {
        let mut child = self
            .command()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("quarry runs");
        let (stdout, stderr) = crate::read_outputs(&mut child);
        let started = Instant::now();
        let mut peak_kib = 0;
        let status = loop {
            if let Some(kib) = crate::proc_status::status_kib(child.id(), "VmHWM:") {
                peak_kib = peak_kib.max(kib);
            }
            if let Ok(Some(status)) = child.try_wait() {
                break status;
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                break child.wait().expect("ended");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
        let output = CliOutput {
            ok: status.success(),
            stdout: text(stdout.join().unwrap_or_default()),
            stderr: text(stderr.join().unwrap_or_default()),
        };
        (output, peak_kib)
    }

    /// Runs a CLI command with `input` on its standard input; it must succeed. Returns its
    /// standard output.
    pub fn cli_with_input(&self, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("quarry runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        let Output {
            status,
            stdout,
            stderr,
        } = child.wait_with_output().expect("quarry ends");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        );
        assert!(
            status.success(),
            "quarry {args:?} failed:\n{stdout}\n{stderr}"
        );
        stdout
    }

    /// Runs a CLI command that must succeed; returns its standard output.
    pub fn cli_ok(&self, args: &[&str]) -> String {
        let out = self.cli(args);
        assert!(
            out.ok,
            "quarry {args:?} failed:\n{}\n{}",
            out.stdout, out.stderr
        );
        out.stdout
    }

    /// Runs a CLI command that must succeed and print JSON.
    pub fn cli_json(&self, args: &[&str]) -> Value {
        let out = self.cli_ok(args);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("quarry {args:?} printed no JSON ({e}): {out}"))
    }

    /// Adds a folder connector; returns its id.
    pub fn add_folder(&self, name: &str, path: &Path) -> String {
        let path = path.to_string_lossy();
        let out = self.cli_json(&[
            "connector",
            "add",
            "folder",
            &path,
            "--name",
            name,
            "--json",
        ]);
        out["connector_id"]
            .as_str()
            .expect("connector_id")
            .to_owned()
    }

    /// Creates an integration (`share`: all, none or names); returns its key.
    pub fn integration(&self, name: &str, share: &str, extra: &[&str]) -> String {
        let mut args = vec!["integration", "create", name, "--share", share, "--json"];
        args.extend_from_slice(extra);
        let out = self.cli_json(&args);
        out["api_key"].as_str().expect("api_key").to_owned()
    }

    /// Writes each fixture folder, adds a folder connector for it, starts the server and waits
    /// until every connector is synced. Returns the connectors' ids, in order.
    pub fn serve_folders(&mut self, folders: &[(&str, Vec<FixtureFile>)]) -> Vec<String> {
        let ids = folders
            .iter()
            .map(|(name, files)| {
                let dir = self.scratch(&name.to_lowercase());
                corpus::write(&dir, files);
                self.add_folder(name, &dir)
            })
            .collect();
        self.start();
        self.wait_synced();
        ids
    }

    /// Starts `quarry serve` on a free port and waits until it answers.
    pub fn start(&mut self) {
        self.start_with_env(&[]);
    }

    /// Like [`Quarry::start`], with extra environment variables for the server.
    pub fn start_with_env(&mut self, env: &[(&str, &str)]) {
        assert!(self.server.is_none(), "already started");
        let log = std::fs::File::create(self.dir.path().join("server.log")).expect("log file");
        let mut child = self
            .command()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("QUARRY_LOG", "info,rmcp=error")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("quarry serve starts");
        let stdout = child.stdout.take().expect("stdout piped");
        let mut saved =
            std::fs::File::create(self.dir.path().join("server.out")).expect("out file");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = writeln!(saved, "{line}");
                if let Some(url) = line.strip_prefix("Quarry is serving http://") {
                    let _ = tx.send(url.trim().to_owned());
                }
            }
        });
        self.server = Some(child);
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(addr) => self.addr = addr,
            Err(_) => panic!("the server did not start; its log:\n{}", self.log()),
        }
    }

    /// The running server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    /// Stops the server with SIGTERM and waits for it; returns how long it took to end.
    pub fn stop(&mut self) -> Duration {
        let Some(mut child) = self.server.take() else {
            return Duration::ZERO;
        };
        let started = Instant::now();
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        while started.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = child.try_wait() {
                return started.elapsed();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("the server did not stop within 30 s of SIGTERM");
    }

    /// Kills the server (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.server.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// What the server printed on its standard output so far.
    pub fn stdout(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.out")).unwrap_or_default()
    }

    /// An admin token of the settings page: the one the server's first start printed, else
    /// one made by `quarry admin token` (which replaces any other); then the same for this
    /// Quarry.
    pub fn admin_token(&self) -> String {
        self.admin_token
            .get_or_init(|| {
                self.printed_admin_token()
                    .unwrap_or_else(|| self.cli_ok(&["admin", "token"]).trim().to_owned())
            })
            .clone()
    }

    /// The admin token the server printed at its first start, if it did.
    pub fn printed_admin_token(&self) -> Option<String> {
        self.stdout().lines().find_map(|line| {
            let rest = line.strip_prefix("admin token: ")?;
            Some(rest.split_whitespace().next()?.to_owned())
        })
    }

    /// Sends raw bytes to the server.
    pub fn raw(&self, request: &[u8]) -> Response {
        http::send(&self.addr, request).unwrap_or_else(|e| panic!("request failed: {e}"))
    }

    /// Sends a request with the right Host header, an optional key and an optional JSON body.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> Response {
        self.request_with(method, path, key, body, &[])
    }

    /// Like [`Quarry::request`], with extra headers.
    pub fn request_with(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Response {
        let auth = key.map(|k| format!("Bearer {k}"));
        let mut all: Vec<(&str, &str)> = headers.to_vec();
        if let Some(auth) = &auth {
            all.push(("Authorization", auth));
        }
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        if !body.is_empty() {
            all.push(("Content-Type", "application/json"));
        }
        self.raw(&http::build(
            method,
            path,
            &self.addr,
            &all,
            body.as_bytes(),
        ))
    }

    /// `POST /api/v1/search` with `body`.
    pub fn search(&self, key: &str, body: Value) -> Response {
        self.request("POST", "/api/v1/search", Some(key), Some(&body))
    }

    /// Searches with `body` and returns the answer, asserting it is a 200.
    pub fn search_ok(&self, key: &str, body: Value) -> Value {
        let response = self.search(key, body.clone());
        assert_eq!(response.status, 200, "{body} -> {}", response.text());
        response.json()
    }

    /// A keyword search for `query` (the first `limit` results), asserting it answers 200.
    pub fn keyword_search(&self, key: &str, query: &str, limit: u32) -> Value {
        self.search_ok(
            key,
            serde_json::json!({"query": query, "semantic_search": false, "limit": limit}),
        )
    }

    /// The connectors as `quarry connector list --json` shows them.
    pub fn connectors(&self) -> Vec<Value> {
        match self.cli_json(&["connector", "list", "--json"]) {
            Value::Array(list) => list,
            other => panic!("not a list: {other}"),
        }
    }

    /// Waits until every connector has finished a sync and is idle, and the embeddings of its
    /// documents are computed (when a model is loaded).
    pub fn wait_synced(&self) {
        self.wait_for("every connector synced and embedded", |connectors| {
            connectors.iter().all(|c| {
                c["status"] == "idle"
                    && !c["last_sync_time"].is_null()
                    && c["embedding"]["pending"].as_u64().unwrap_or(0) == 0
            })
        });
    }

    /// Waits until every connector has finished a sync and is idle, and OCR has read every
    /// image and scanned page it queued.
    pub fn wait_for_ocr(&self) {
        self.wait_for("OCR to read every image", |connectors| {
            connectors.iter().all(|c| {
                c["status"] == "idle"
                    && !c["last_sync_time"].is_null()
                    && c["ocr"]["pending"].as_u64() == Some(0)
            })
        });
    }

    /// Waits (up to 60 s) until `done` holds for the connector list.
    pub fn wait_for(&self, what: &str, done: impl Fn(&[Value]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let connectors = self.connectors();
            if done(&connectors) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {connectors:?}\nserver log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Quarry {
    fn drop(&mut self) {
        self.kill();
    }
}
