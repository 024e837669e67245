//! The host's watches of sources that tell of their changes (WIT 0.5.0 `watch`), against the
//! hostile test plugin: a plugin that answers `changed` at every look cannot make the server
//! sync without rest, and at most 32 sources are watched at once (each holds a thread, an
//! instance and a connection), the others syncing on their schedule.

use std::time::{Duration, Instant};

use quarry_tests::quarry::Quarry;

/// A server with the hostile plugin installed and `count` connectors of it in `mode`.
fn with_hostile_connectors(mode: &str, count: usize) -> Quarry {
    let mut q = Quarry::new();
    q.without_model();
    let plugin = quarry_tests::plugin_dir("hostile");
    q.cli_ok(&["plugin", "install", &plugin.to_string_lossy(), "--yes"]);
    let mode = format!("mode={mode}");
    for n in 0..count {
        let name = format!("W{n:02}");
        q.cli_ok(&[
            "connector",
            "add",
            "plugin",
            "hostile",
            "--name",
            &name,
            "--set",
            &mode,
        ]);
    }
    q.start();
    q.wait_synced();
    q
}

/// The server's threads whose names start with `prefix`.
fn threads_named(q: &Quarry, prefix: &str) -> usize {
    let pid = q.pid().expect("a running server");
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the server's threads")
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

#[test]
fn a_source_that_always_says_changed_is_synced_with_rest() {
    let q = with_hostile_connectors("eager", 1);
    let started = q.log().matches("sync started").count();
    std::thread::sleep(Duration::from_secs(12));
    let syncs = q.log().matches("sync started").count() - started;
    // Three syncs at once, then pauses of 5 s and 10 s: about five in 12 s (without the pause,
    // one every few milliseconds).
    assert!(
        (2..=8).contains(&syncs),
        "{syncs} syncs in 12 s; the log:\n{}",
        q.log()
    );
}

#[test]
fn at_most_32_sources_are_watched_and_the_others_sync_on_their_schedule() {
    let q = with_hostile_connectors("waits", 34);
    let until = Instant::now() + Duration::from_secs(30);
    while threads_named(&q, "watch ") < 32 {
        assert!(
            Instant::now() < until,
            "{} watches after 30 s",
            threads_named(&q, "watch ")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(threads_named(&q, "watch "), 32);
    assert_eq!(
        q.log()
            .matches("sources are watched already; this one syncs on its schedule")
            .count(),
        2,
        "{}",
        q.log()
    );
}
