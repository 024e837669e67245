//! Quarry as a resident service: it tells its service manager (systemd's notify protocol, on a
//! socket the test owns) that it is ready, alive and stopping, and it reads its settings file
//! beneath the environment and the flags.

use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

use quarry_tests::quarry::Quarry;
use serde_json::Value;

/// The next state the server sends, if one comes within `limit`.
fn try_state(socket: &UnixDatagram, limit: Duration) -> Option<String> {
    socket.set_read_timeout(Some(limit)).expect("timeout");
    let mut buf = [0u8; 4096];
    let n = socket.recv(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// The next state the server sends, within `limit`.
fn next_state(socket: &UnixDatagram, limit: Duration) -> String {
    try_state(socket, limit).expect("a state from the server")
}

/// A server started under a service manager whose socket the test owns, with a watchdog of one
/// second and `env` besides; returns it, once it said it is ready, with the socket.
fn under_a_manager(env: &[(&str, &str)]) -> (Quarry, UnixDatagram, String) {
    let mut q = Quarry::new();
    q.without_model();
    let path = q.scratch("manager").join("notify");
    let socket = UnixDatagram::bind(&path).expect("bind");
    let notify = path.to_str().expect("utf-8").to_owned();
    let mut all = vec![
        ("NOTIFY_SOCKET", notify.as_str()),
        ("WATCHDOG_USEC", "1000000"),
    ];
    all.extend_from_slice(env);
    q.start_with_env(&all);
    let ready = next_state(&socket, Duration::from_secs(30));
    assert!(ready.starts_with("READY=1\n"), "{ready}");
    (q, socket, ready)
}

#[test]
fn the_server_tells_its_service_manager_it_is_ready_alive_and_stopping() {
    // A watchdog of one second: the server beats every half second.
    let (mut q, socket, ready) = under_a_manager(&[]);
    assert!(
        ready.contains(&format!("STATUS=serving {}", q.url())),
        "{ready}"
    );
    let started = Instant::now();
    let mut beats = 0;
    while beats < 3 {
        let state = next_state(&socket, Duration::from_secs(5));
        assert_eq!(state, "WATCHDOG=1");
        beats += 1;
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900),
        "three beats half a second apart: {elapsed:?}"
    );
    q.stop();
    // Beats may still arrive before the server stops.
    let mut before = Vec::new();
    loop {
        match try_state(&socket, Duration::from_secs(5)) {
            Some(state) if state == "STOPPING=1" => break,
            Some(state) => before.push(state),
            None => panic!("no STOPPING=1 after {before:?}"),
        }
    }
}

#[test]
fn a_watchdog_meant_for_another_process_is_not_beaten() {
    let (_q, socket, _) = under_a_manager(&[("WATCHDOG_PID", "1")]);
    let beat = try_state(&socket, Duration::from_millis(1500));
    assert_eq!(beat, None, "no beat for another process's watchdog");
}

/// The settings as `quarry config --json` reports them, by key.
fn settings(q: &Quarry) -> Vec<(String, String, String)> {
    let shown = q.cli_json(&["config", "--json"]);
    shown["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .map(|s| {
            let field = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
            (field("key"), field("value"), field("origin"))
        })
        .collect()
}

fn setting(all: &[(String, String, String)], key: &str) -> (String, String) {
    let (_, value, origin) = all
        .iter()
        .find(|(k, _, _)| k == key)
        .unwrap_or_else(|| panic!("{key} in {all:?}"));
    (value.clone(), origin.clone())
}

#[test]
fn the_settings_file_stands_beneath_the_environment_and_the_flags() {
    let mut q = Quarry::new();
    q.without_model();
    std::fs::write(
        q.config_file(),
        "# Quarry's settings\n\
         data-dir = \"/nowhere/file-data\"\n\
         keys-dir = \"/nowhere/file-keys\"\n\
         component-cache = \"~/.cache/quarry-from-file\"\n\
         \n\
         [serve]\n\
         public-url = \"http://127.0.0.1:9/quarry\"\n\
         audit-retention-days = 30\n",
    )
    .expect("write");
    let all = settings(&q);
    // The harness passes --data-dir as a flag and the keys folder in QUARRY_KEYS_DIR.
    assert_eq!(
        setting(&all, "data-dir"),
        (
            q.data_dir().display().to_string(),
            "flag --data-dir".to_owned()
        )
    );
    assert_eq!(
        setting(&all, "keys-dir"),
        (
            q.keys_dir().display().to_string(),
            "environment QUARRY_KEYS_DIR".to_owned()
        )
    );
    let home = std::env::var("HOME").expect("HOME");
    assert_eq!(
        setting(&all, "serve.audit-retention-days"),
        ("30".to_owned(), "config.toml line 8".to_owned())
    );
    assert_eq!(
        setting(&all, "serve.rate-limit").1,
        "default",
        "nothing named it"
    );
    // The harness names the component cache in the environment too; without it, the file's
    // value (with ~ expanded) stands.
    let (program, args, mut env) = q.invocation(&["config", "--json"]);
    env.remove("QUARRY_COMPONENT_CACHE");
    let out = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(env)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: Value = serde_json::from_slice(&out.stdout).expect("json");
    let cache = shown["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .find(|s| s["key"] == "component-cache")
        .expect("component-cache")
        .clone();
    assert_eq!(cache["value"], format!("{home}/.cache/quarry-from-file"));
    assert_eq!(cache["origin"], "config.toml line 4");
    // `serve` takes the file's [serve] values.
    q.start();
    assert!(
        q.stdout()
            .contains("settings: http://127.0.0.1:9/quarry/settings"),
        "{}",
        q.stdout()
    );
}

#[test]
fn a_bad_settings_file_stops_every_command_naming_its_line_and_the_fix() {
    let q = Quarry::new();
    let cases = [
        (
            "[serve]\nlisten = \"127.0.0.1:4747\"\nparallel-syncs = 0\n",
            "line 3: serve.parallel-syncs",
        ),
        (
            "data_dir = \"/x\"\n",
            "line 1: unknown setting data_dir (write it with dashes: data-dir)",
        ),
        (
            "model-dir = \"models/mine\"\n",
            "write an absolute path, or one starting with ~/",
        ),
        ("[serve\n", "line 1"),
    ];
    for (text, said) in cases {
        std::fs::write(q.config_file(), text).expect("write");
        let out = q.cli(&["integration", "list"]);
        assert!(!out.ok, "{text}");
        assert!(out.stderr.contains("config.toml"), "{}", out.stderr);
        assert!(out.stderr.contains(said), "{text}: {}", out.stderr);
    }
}

/// Voluntary context switches of each of `pid`'s threads, by thread (name and id).
fn wakeups(pid: u32) -> std::collections::BTreeMap<String, u64> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("tasks")
        .flatten()
        .filter_map(|t| {
            let name = std::fs::read_to_string(t.path().join("comm")).ok()?;
            let switches = std::fs::read_to_string(t.path().join("status"))
                .ok()?
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())?;
            Some((
                format!("{} {}", name.trim(), t.file_name().to_string_lossy()),
                switches,
            ))
        })
        .collect()
}

/// The threads of `after` that woke since `before`, with how often.
fn woken(
    before: &std::collections::BTreeMap<String, u64>,
    after: &std::collections::BTreeMap<String, u64>,
) -> Vec<(String, u64)> {
    after
        .iter()
        .filter_map(|(thread, n)| {
            let was = before.get(thread).copied().unwrap_or(0);
            (*n > was).then(|| (thread.clone(), n - was))
        })
        .collect()
}

#[test]
fn an_idle_server_wakes_for_nothing_and_for_work_at_once() {
    let mut q = Quarry::new();
    let folder = q.scratch("notes");
    std::fs::write(folder.join("heron.md"), "The heron waits in the reeds.\n").expect("write");
    q.add_folder("Notes", &folder);
    q.start();
    q.wait_synced();
    let pid = q.pid().expect("running");
    // The last command's writes to the database wake the scheduler once; the queue's last look
    // (which finds nothing pending) follows the last commit closely.
    std::thread::sleep(Duration::from_millis(1500));
    let before = wakeups(pid);
    std::thread::sleep(Duration::from_secs(3));
    let idle = woken(&before, &wakeups(pid));
    assert!(idle.is_empty(), "threads that woke while idle: {idle:?}");
    // Work wakes them: a new file is synced, embedded and found; a sync asked for from the
    // command line starts.
    std::fs::write(folder.join("invoice.md"), "Quarterly invoice totals.\n").expect("write");
    q.wait_for("the new file synced and embedded", |connectors| {
        connectors
            .iter()
            .all(|c| c["doc_count"] == 2 && c["embedding"]["pending"].as_u64() == Some(0))
    });
    let worked = woken(&before, &wakeups(pid));
    for busy in ["quarry-epoch", "quarry-embeddin"] {
        assert!(
            worked.iter().any(|(t, _)| t.starts_with(busy)),
            "{busy} woke for work: {worked:?}"
        );
    }
    let last = q.connectors()[0]["last_sync_time"].clone();
    q.cli_ok(&["connector", "sync", "Notes"]);
    q.wait_for("the sync asked for from the command line", |connectors| {
        connectors[0]["last_sync_time"] != last && connectors[0]["status"] == "idle"
    });
}
