//! Quarry installed as a person installs it, not run from the checkout: the Debian package
//! (`make deb`) installed with dpkg and used by a plain user, and `make install` into an empty
//! prefix. Either way, from `/`, with no flag and no QUARRY_* variable: a folder is added, the
//! server finds its bundled plugins, model and ONNX Runtime, a keyword and a semantic search find
//! the file, the manual page renders, the completions load, the unit verifies; removing Quarry
//! leaves the user's data. `make test` packages the binary it built (the debug one: the same code
//! as `make deb`'s release binary, without compiling every dependency twice) first.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use quarry_tests::http;
use quarry_tests::install::install_into;
use quarry_tests::quarry::running_as_root;
use serde_json::{Value, json};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lies in the repository")
        .to_owned()
}

/// How to run a command as the person who installed Quarry: a clean environment (HOME, PATH,
/// USER only), from `/`, through `runner` (e.g. `runuser -u NAME --`).
struct Person {
    runner: Vec<String>,
    home: PathBuf,
    user: String,
    /// Where `quarry` is: first on PATH.
    bin_dir: PathBuf,
}

impl Person {
    fn command(&self, program: &str, args: &[&str]) -> Command {
        let (first, rest) = self
            .runner
            .split_first()
            .map_or((program, Vec::new()), |(f, r)| {
                let mut rest: Vec<&str> = r.iter().map(String::as_str).collect();
                rest.push(program);
                (f.as_str(), rest)
            });
        let mut command = Command::new(first);
        command
            .args(rest)
            .args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("USER", &self.user)
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", self.bin_dir.display()),
            )
            .current_dir("/")
            .stdin(Stdio::null());
        command
    }

    /// Runs a shell line as this person; asserts it succeeds and returns its standard output.
    fn sh(&self, line: &str) -> String {
        let Output {
            status,
            stdout,
            stderr,
        } = self.command("sh", &["-c", line]).output().expect("sh runs");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        );
        assert!(
            status.success(),
            "`{line}` failed ({status}):\n{stdout}\n{stderr}"
        );
        stdout
    }

    /// Starts `quarry serve` on a free loopback port; returns it and its address.
    fn serve(&self) -> (Server, String) {
        // In a process group of its own: `runuser` does not pass a kill on to its child.
        let mut child = self
            .command("quarry", &["serve", "--listen", "127.0.0.1:0"])
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("quarry serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let log = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        let server = Server {
            child,
            log: Some(log),
        };
        let mut lines = BufReader::new(stdout).lines();
        let addr = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(url) = line.strip_prefix("Quarry is serving http://") {
                        break url.trim().to_owned();
                    }
                }
                _ => panic!("the server did not start:\n{}", server.stop()),
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        (server, addr)
    }
}

struct Server {
    child: Child,
    log: Option<std::thread::JoinHandle<String>>,
}

impl Server {
    /// Stops the server and returns what it logged.
    fn stop(mut self) -> String {
        self.signal("TERM");
        let _ = self.child.wait();
        self.log
            .take()
            .and_then(|l| l.join().ok())
            .unwrap_or_default()
    }

    /// Sends `signal` to the server's process group.
    fn signal(&self, signal: &str) {
        // Quiet: the group may be gone already.
        let _ = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg("--")
            .arg(format!("-{}", self.child.id()))
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.signal("KILL");
        let _ = self.child.wait();
    }
}

fn search(addr: &str, key: &str, body: &Value) -> Value {
    let text = body.to_string();
    let auth = format!("Bearer {key}");
    let response = http::send(
        addr,
        &http::build(
            "POST",
            "/api/v1/search",
            addr,
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
            ],
            text.as_bytes(),
        ),
    )
    .expect("search");
    assert_eq!(response.status, 200, "{}", response.text());
    response.json()
}

fn paths(answer: &Value) -> Vec<String> {
    quarry_tests::quarry::result_paths(answer)
}

/// Everything a person does after installing, with no flag: returns the data folder.
fn use_quarry_as_installed(person: &Person) -> PathBuf {
    let docs = person.home.join("Documents");
    person.sh("mkdir -p ~/Documents");
    person.sh(
        "printf 'The heron nests in the reeds by the reservoir at dawn.\\n' > ~/Documents/heron.md \
         && printf 'Quarterly invoice totals and the tax summary.\\n' > ~/Documents/invoice.md",
    );
    let added = person.sh("quarry connector add folder ~/Documents --name Documents");
    assert!(added.contains("Documents"), "{added}");
    let plugins = person.sh("quarry plugin list");
    for bundled in ["folder", "feed", "mbox"] {
        assert!(plugins.contains(bundled), "{bundled} is bundled: {plugins}");
    }
    let created: Value = serde_json::from_str(
        &person.sh("quarry integration create Agent --share all --quota unlimited --json"),
    )
    .expect("json");
    let key = created["api_key"].as_str().expect("a key").to_owned();
    let (server, addr) = person.serve();
    // Synced, and the vectors computed: the model and ONNX Runtime came with the install.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let list: Value =
            serde_json::from_str(&person.sh("quarry connector list --json")).expect("json");
        let done = list.as_array().is_some_and(|l| {
            l.iter().all(|c| {
                c["status"] == "idle"
                    && !c["last_sync_time"].is_null()
                    && c["embedding"]["pending"].as_u64() == Some(0)
                    && c["doc_count"].as_u64() == Some(2)
            })
        });
        if done {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not synced and embedded: {list}\n{}",
            server.stop()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let keyword = search(
        &addr,
        &key,
        &json!({"query": "heron", "semantic_search": false}),
    );
    assert_eq!(paths(&keyword), ["heron.md"], "{keyword}");
    // No word of this query is in the file: only its meaning finds it.
    let meaning = "a wading bird beside a lake";
    let by_words = search(
        &addr,
        &key,
        &json!({"query": meaning, "semantic_search": false}),
    );
    assert!(paths(&by_words).is_empty(), "{by_words}");
    let by_meaning = search(&addr, &key, &json!({"query": meaning, "limit": 1}));
    assert_eq!(paths(&by_meaning), ["heron.md"], "{by_meaning}");
    let log = server.stop();
    assert!(log.contains("semantic search is on"), "{log}");
    assert!(!log.contains("no plugins found"), "{log}");
    let data = person.home.join(".local/share/quarry");
    assert!(data.join("quarry.db").is_file(), "the data folder: {log}");
    assert!(docs.join("heron.md").is_file());
    data
}

/// The manual page renders, the bash completions load, the unit verifies.
fn check_the_extras(person: &Person, man_page: &Path, bash_completion: &Path, unit: &Path) {
    let man = person.sh(&format!(
        "MANWIDTH=80 man -l {} | col -b",
        man_page.display()
    ));
    assert!(man.contains("quarry"), "{man}");
    assert!(man.contains("serve"), "{man}");
    let complete = person.sh(&format!(
        "bash -c '. {} && complete -p quarry'",
        bash_completion.display()
    ));
    assert!(complete.contains("quarry"), "{complete}");
    let unit_text = std::fs::read_to_string(unit).expect("unit");
    assert!(unit_text.contains("Type=notify"), "{unit_text}");
    // wasmtime's compiler writes code it then runs.
    assert!(
        !unit_text
            .lines()
            .any(|l| l.starts_with("MemoryDenyWriteExecute")),
        "{unit_text}"
    );
    let verified = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(unit)
        .output()
        .expect("systemd-analyze runs");
    assert!(
        verified.status.success(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&verified.stderr)
    );
}

/// A plain user made for one test, removed (with its home) afterwards.
struct PlainUser {
    name: String,
    home: PathBuf,
}

impl PlainUser {
    fn new(tag: &str) -> PlainUser {
        let name = format!("q{tag}{}", std::process::id());
        let home = PathBuf::from(format!("/home/{name}"));
        let made = Command::new("useradd")
            .args(["--create-home", "--shell", "/bin/sh", &name])
            .status()
            .expect("useradd runs");
        assert!(made.success(), "useradd {name}");
        PlainUser { name, home }
    }
}

impl Drop for PlainUser {
    fn drop(&mut self) {
        let _ = Command::new("pkill").args(["-u", &self.name]).status();
        let _ = Command::new("userdel")
            .args(["--remove", &self.name])
            .stderr(Stdio::null())
            .status();
    }
}

fn dpkg(args: &[&str]) {
    let out = Command::new("dpkg").args(args).output().expect("dpkg runs");
    assert!(
        out.status.success(),
        "dpkg {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_package_installed_with_dpkg_serves_a_plain_user_with_no_flags_and_leaves_data_when_removed()
{
    if !running_as_root() {
        eprintln!("skipped: installing a package needs root (CI runs as root)");
        return;
    }
    let debs: Vec<PathBuf> = std::fs::read_dir(root().join("target/debian"))
        .map(|dir| {
            dir.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "deb"))
                .collect()
        })
        .unwrap_or_default();
    let [deb] = debs.as_slice() else {
        panic!("one package in target/debian: `make deb` (make test does) builds it: {debs:?}");
    };
    dpkg(&["-i", &deb.to_string_lossy()]);
    let user = PlainUser::new("deb");
    let person = Person {
        runner: ["/usr/sbin/runuser", "-u", &user.name, "--"]
            .map(str::to_owned)
            .to_vec(),
        home: user.home.clone(),
        user: user.name.clone(),
        bin_dir: PathBuf::from("/usr/bin"),
    };
    let data = use_quarry_as_installed(&person);
    check_the_extras(
        &person,
        Path::new("/usr/share/man/man1/quarry.1.gz"),
        Path::new("/usr/share/bash-completion/completions/quarry"),
        Path::new("/usr/lib/systemd/user/quarry.service"),
    );
    dpkg(&["-r", "quarry"]);
    assert!(!Path::new("/usr/bin/quarry").exists(), "removed");
    assert!(!Path::new("/usr/share/quarry").exists(), "removed");
    assert!(data.join("quarry.db").is_file(), "the user's data stays");
}

#[test]
fn make_install_into_an_empty_prefix_serves_with_no_flags_and_uninstall_leaves_data() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let prefix = tmp.path().join("prefix");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    install_into(&prefix, &[]);
    let person = Person {
        runner: Vec::new(),
        home: home.clone(),
        user: std::env::var("USER").unwrap_or_else(|_| "root".to_owned()),
        bin_dir: prefix.join("bin"),
    };
    let data = use_quarry_as_installed(&person);
    check_the_extras(
        &person,
        &prefix.join("share/man/man1/quarry.1.gz"),
        &prefix.join("share/bash-completion/completions/quarry"),
        &prefix.join("lib/systemd/user/quarry.service"),
    );
    install_into(&prefix, &["--uninstall"]);
    let left: Vec<PathBuf> = walk_files(&prefix);
    assert!(left.is_empty(), "uninstall removes every file: {left:?}");
    assert!(data.join("quarry.db").is_file(), "the user's data stays");
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}
