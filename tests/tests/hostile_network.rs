//! A granted host name that resolves to a loopback (or private, or link-local) address cannot
//! reach it: the server runs in a mount namespace of the test's whose `/etc/hosts` makes
//! `rebind.test` answer 127.0.0.1, as a DNS rebinding attack would.

use std::fs;

use quarry_tests::quarry::{Quarry, in_mount_namespace};
use quarry_tests::web::{WebServer, rss};

#[test]
fn a_granted_name_that_resolves_to_loopback_cannot_reach_it() {
    let feed = WebServer::start();
    feed.put(
        "/feed.xml",
        "application/rss+xml",
        &rss(&[("a1", "Internal note", "Only for the loopback.")]),
    );
    let mut q = Quarry::new();
    let hosts = q.scratch("etc").join("hosts");
    let mut text = fs::read_to_string("/etc/hosts").unwrap_or_default();
    text.push_str("\n127.0.0.1 rebind.test\n");
    fs::write(&hosts, text).expect("hosts");
    let command = in_mount_namespace("mount --bind \"$1\" /etc/hosts", &[&hosts]);
    q.run_through(&command.iter().map(String::as_str).collect::<Vec<_>>());

    // The namespace works: the name answers the loopback address inside it.
    let probe = std::process::Command::new(&command[0])
        .args(&command[1..])
        .args(["getent", "hosts", "rebind.test"])
        .output()
        .expect("the namespace runs");
    assert!(
        String::from_utf8_lossy(&probe.stdout).contains("127.0.0.1"),
        "unshare and a bind mount of /etc/hosts are needed: {}",
        String::from_utf8_lossy(&probe.stderr)
    );

    let url = format!("http://rebind.test:{}/feed.xml", feed.port());
    let added = q.cli(&[
        "connector",
        "add",
        "plugin",
        "feed",
        "--name",
        "Rebound",
        "--set",
        &format!("feed_url={url}"),
    ]);
    assert!(!added.ok, "the plugin's own check cannot reach it either");
    assert!(
        added.stderr.contains("resolves only to 127.0.0.1"),
        "{}",
        added.stderr
    );
    assert!(feed.seen().is_empty(), "no request reached the server");

    // The same server, granted by its address: reachable, as the user asked.
    let direct = q.cli(&[
        "connector",
        "add",
        "plugin",
        "feed",
        "--name",
        "Direct",
        "--set",
        &format!("feed_url={}", feed.url("/feed.xml")),
    ]);
    assert!(direct.ok, "{}", direct.stderr);
    assert_eq!(feed.seen().len(), 1);
}
