//! The WebDAV connector against Apache httpd with mod_dav on loopback: the first sync of a
//! tree of `QUARRY_BENCH_WEBDAV_FILES` Markdown notes (default 10,000, 100 a folder), from
//! adding the connector to a running server until every file is searchable (fetched, text
//! extracted, indexed, keyword only), beside `rclone copy` (Debian's rclone) of the same tree
//! from the same server to a local folder in the same run; then an unchanged resync: its
//! requests (from the server's log) and seconds.
//!
//! `make bench` runs it (release build). Goal: at least 0.8x rclone's files per second.

use std::process::Command;
use std::time::{Duration, Instant};

use quarry_tests::bench::env_or;
use quarry_tests::dav::{DavServer, PASSWORD, Server, USER};
use quarry_tests::generated::write_notes;
use quarry_tests::local_servers::give_to_server_user;
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;

fn main() {
    let files = env_or("QUARRY_BENCH_WEBDAV_FILES", 10_000);
    let server = DavServer::start(Server::Apache);
    write_notes(&server.root(), files, &mut Rng(53));
    give_to_server_user(&server.root());
    let rclone = rclone_seconds(&server);
    let (quarry, resync_requests, resync_seconds) = quarry_seconds(&server, files);
    let rate = |seconds: f64| files as f64 / seconds;
    println!(
        "{:>7} {:>10} {:>13} {:>10} {:>13} {:>7} {:>16} {:>10}",
        "files",
        "rclone s",
        "rclone file/s",
        "quarry s",
        "quarry file/s",
        "ratio",
        "resync requests",
        "resync s"
    );
    println!(
        "{:>7} {:>10.1} {:>13.0} {:>10.1} {:>13.0} {:>6.2}x {:>16} {:>10.2}",
        files,
        rclone,
        rate(rclone),
        quarry,
        rate(quarry),
        rate(quarry) / rate(rclone),
        resync_requests,
        resync_seconds,
    );
    println!(
        "ratio: Quarry's files/s (listed by PROPFIND, fetched, text extracted, indexed,\n\
         searchable) over rclone copy's (listed and fetched to a local folder, its default 4\n\
         transfers). resync: an unchanged tree synced again (`connector sync --wait`)."
    );
}

/// Seconds `rclone copy` takes to fetch the tree to a fresh folder.
fn rclone_seconds(server: &DavServer) -> f64 {
    let obscured = Command::new("rclone")
        .args(["obscure", PASSWORD])
        .output()
        .expect("rclone runs (`make setup` installs it)");
    let obscured = String::from_utf8_lossy(&obscured.stdout).trim().to_owned();
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let out = Command::new("rclone")
        .args(["copy", ":webdav:", "--webdav-url"])
        .arg(server.url())
        .args([
            "--webdav-user",
            USER,
            "--webdav-pass",
            &obscured,
            "--config",
            "/dev/null",
        ])
        .arg(dir.path())
        .output()
        .expect("rclone runs");
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "rclone failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    seconds
}

/// Seconds from adding the connector to a running server until all `files` are indexed, then
/// the requests and seconds of an unchanged resync.
fn quarry_seconds(server: &DavServer, files: usize) -> (f64, usize, f64) {
    let mut q = Quarry::new();
    q.without_model();
    q.start();
    let started = Instant::now();
    let args = server.connector_add_args(PASSWORD);
    q.cli_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let until = Instant::now() + Duration::from_secs(3600);
    loop {
        let connectors = q.connectors();
        if connectors[0]["doc_count"].as_u64() == Some(files as u64)
            && connectors[0]["status"] == "idle"
        {
            break;
        }
        assert!(
            Instant::now() < until,
            "the first sync did not end: {connectors:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let seconds = started.elapsed().as_secs_f64();
    let before = server.requests().len();
    let resync = Instant::now();
    q.cli_ok(&["connector", "sync", "Cloud", "--wait"]);
    let resync_seconds = resync.elapsed().as_secs_f64();
    let requests = server.requests().len() - before;
    (seconds, requests, resync_seconds)
}
