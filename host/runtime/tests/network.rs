//! Network connectors: `wasi:http` reaches exactly the granted hosts. Real components (the feed
//! connector, the hostile test plugin) against HTTP servers on loopback.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{load, runtime, settings};
use quarry_runtime::{Grant, Limits, Refusal, RuntimeErrorKind};
use quarry_tests::dovecot::Dovecot;
use quarry_tests::web::{WebServer, rss};

fn feed_server() -> WebServer {
    let server = WebServer::start();
    server.put(
        "/feed.xml",
        "application/rss+xml",
        &rss(&[
            (
                "a1",
                "Quarterly report",
                "&lt;p&gt;Revenue grew in the &lt;b&gt;third&lt;/b&gt; quarter.&lt;/p&gt;",
            ),
            ("a2", "Team offsite", "Plans for the offsite in Lisbon."),
            ("a3", "Tom &amp; Jerry", "A cat and a mouse."),
        ]),
    );
    server.require_basic("reader", "s3cret-feed-pass");
    server
}

#[test]
fn the_feed_connector_reads_a_granted_feed_with_credentials() {
    let server = feed_server();
    let runtime = runtime();
    let plugin = load(&runtime, "feed", Limits::default());
    let url = server.url("/feed.xml");
    let (values, grant) = settings(
        &plugin,
        &[
            ("feed_url", &url),
            ("username", "reader"),
            ("password", "s3cret-feed-pass"),
        ],
    );
    assert_eq!(grant.hosts, vec![format!("127.0.0.1:{}", server.port())]);
    plugin
        .validate_config(&values, &grant)
        .expect("the feed validates");
    let mut session = plugin.session(&values, &grant, None).expect("session");
    let batch = session.list_docs(None).expect("listing");
    let titles: Vec<&str> = batch
        .upserts
        .iter()
        .map(|d| d.meta.title.as_str())
        .collect();
    assert_eq!(titles, ["Quarterly report", "Team offsite", "Tom & Jerry"]);
    assert_eq!(
        batch.upserts[0].meta.update_time_ms,
        1_793_523_600_000, // 2026-11-01T09:00:00Z
    );
    let first = &batch.upserts[0];
    let text = session
        .fetch_content(&first.id, &first.locator)
        .expect("content")
        .text;
    assert!(
        text.contains("Revenue grew in the third quarter."),
        "{text}"
    );
    // The next listing asks conditionally and gets 304: nothing new.
    let again = session
        .list_docs(Some(&batch.checkpoint))
        .expect("relisting");
    assert!(again.upserts.is_empty());
    let seen = server.seen();
    assert!(seen.iter().any(|r| r.headers.contains_key("if-none-match")));
    let usage = session.usage();
    assert_eq!(
        usage.calls, 3,
        "list, fetch, list (validate ran in its own session): {usage:?}"
    );
    assert!(
        usage.cpu.as_nanos() > 0 && usage.peak_memory_bytes > 0,
        "{usage:?}"
    );

    // Wrong credentials: a configuration error that says what to check.
    let (values, grant) = settings(
        &plugin,
        &[
            ("feed_url", &url),
            ("username", "reader"),
            ("password", "wrong"),
        ],
    );
    let err = plugin.validate_config(&values, &grant).expect_err("401");
    assert!(
        err.to_string().contains("check the user name and password"),
        "{err}"
    );
}

#[test]
fn a_feed_url_outside_the_grant_is_refused_naming_the_host() {
    let granted = feed_server();
    let other = feed_server();
    let runtime = runtime();
    let plugin = load(&runtime, "feed", Limits::default());
    let values: BTreeMap<String, String> =
        BTreeMap::from([("feed_url".to_owned(), other.url("/feed.xml"))]);
    let grant = Grant {
        hosts: vec![format!("127.0.0.1:{}", granted.port())],
        ..Grant::default()
    };
    let Err(err) = plugin.session(&values, &grant, None) else {
        panic!("a session outside the grant must be refused");
    };
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "connecting to 127.0.0.1:{} was not granted",
            other.port()
        )),
        "{message}"
    );
    assert!(other.seen().is_empty());
}

#[test]
fn the_host_refuses_requests_to_hosts_outside_the_grant() {
    let granted = feed_server();
    let other = feed_server();
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", Limits::default());
    let grant = Grant {
        hosts: vec![format!("127.0.0.1:{}", granted.port())],
        ..Grant::default()
    };
    let fetch = |url: String| {
        let values = BTreeMap::from([
            ("mode".to_owned(), "fetch".to_owned()),
            ("url".to_owned(), url),
        ]);
        plugin
            .session(&values, &grant, None)
            .expect("session")
            .list_docs(None)
    };
    let ok = fetch(granted.url("/feed.xml")).expect("the granted host answers");
    assert_eq!(ok.upserts[0].meta.title, "HTTP 401");
    assert_eq!(granted.seen().len(), 1);

    for url in [
        other.url("/feed.xml"),
        format!("http://localhost:{}/feed.xml", granted.port()),
        format!("http://127.0.0.1:{}/feed.xml", granted.port() ^ 1),
    ] {
        let err = fetch(url.clone()).expect_err("outside the grant");
        let authority = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        match err.kind() {
            RuntimeErrorKind::NetworkDenied {
                refused,
                granted: g,
                ..
            } => {
                assert_eq!(
                    refused,
                    &vec![Refusal {
                        authority: authority.clone(),
                        addresses: Vec::new()
                    }]
                );
                assert_eq!(g, &grant.hosts);
            }
            _ => panic!("expected a network refusal, got {err}"),
        }
        assert!(err.to_string().contains(&authority), "{err}");
    }
    assert!(
        other.seen().is_empty(),
        "no request reached the other server"
    );
}

#[test]
fn redirects_are_followed_only_to_granted_hosts() {
    let granted = feed_server();
    let other = feed_server();
    // Within the grant: followed. To another host (another port is another host): refused
    // before it connects, as a request to it would be.
    granted.redirect("/moved.xml", &granted.url("/feed.xml"));
    granted.redirect("/away.xml", &other.url("/feed.xml"));
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", Limits::default());
    let grant = Grant {
        hosts: vec![format!("127.0.0.1:{}", granted.port())],
        ..Grant::default()
    };
    let fetch = |path: &str| {
        let values = BTreeMap::from([
            ("mode".to_owned(), "fetch".to_owned()),
            ("url".to_owned(), granted.url(path)),
        ]);
        plugin
            .session(&values, &grant, None)
            .expect("session")
            .list_docs(None)
    };
    let followed = fetch("/moved.xml").expect("a redirect within the grant is followed");
    assert_eq!(
        followed.upserts[0].meta.title, "HTTP 401",
        "the feed's own answer"
    );
    assert!(granted.seen().iter().any(|r| r.path == "/feed.xml"));

    let err = fetch("/away.xml").expect_err("a redirect out of the grant is refused");
    match err.kind() {
        RuntimeErrorKind::NetworkDenied { refused, .. } => {
            let refused: Vec<&str> = refused.iter().map(|r| r.authority.as_str()).collect();
            assert_eq!(refused, [format!("127.0.0.1:{}", other.port())]);
        }
        _ => panic!("expected a network refusal, got {err}"),
    }
    assert!(other.seen().is_empty(), "nothing reached the other host");
}

#[test]
fn a_plugin_waiting_on_a_body_that_never_comes_is_stopped_at_the_deadline() {
    let server = feed_server();
    server.stall("/stalled.xml");
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", common::quick_limits());
    let grant = Grant {
        hosts: vec![format!("127.0.0.1:{}", server.port())],
        ..Grant::default()
    };
    let values = BTreeMap::from([
        ("mode".to_owned(), "fetch".to_owned()),
        ("url".to_owned(), server.url("/stalled.xml")),
    ]);
    let mut session = plugin.session(&values, &grant, None).expect("session");
    let started = std::time::Instant::now();
    let err = session.list_docs(None).expect_err("the body never comes");
    let took = started.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(1900) && took < std::time::Duration::from_secs(3),
        "stopped at the 2 s deadline: {took:?} ({err})"
    );
}

/// A hostile plugin's session whose `server` is Dovecot's TLS port, trusting its CA when
/// `trust`, with `mode` and `port` (another loopback port, outside the grant).
fn streams_session(
    plugin: &quarry_runtime::Plugin,
    dovecot: &Dovecot,
    mode: &str,
    trust: bool,
) -> quarry_runtime::Session {
    let server = format!("tls://127.0.0.1:{}", dovecot.imaps_port);
    let other = dovecot.imap_port.to_string();
    let ca = dovecot.ca_file().to_string_lossy().into_owned();
    let mut pairs = vec![("mode", mode), ("server", &server), ("port", &other)];
    if trust {
        pairs.push(("ca", &ca));
    }
    let (values, grant) = settings(plugin, &pairs);
    assert_eq!(grant.hosts, [format!("127.0.0.1:{}", dovecot.imaps_port)]);
    plugin.session(&values, &grant, None).expect("session")
}

/// A guest reaches only its granted server, only through TLS the host verifies, with a bounded
/// number of connections, each closed when unused for 30 s or when its instance ends.
#[test]
fn a_guest_gets_connections_only_to_its_grant_only_verified_and_only_while_used() {
    let dovecot = Dovecot::start();
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", Limits::default());
    let report = |session: &mut quarry_runtime::Session| {
        let probe = session.list_docs(None).expect("probe").upserts;
        session
            .fetch_content(&probe[0].id, &probe[0].locator)
            .expect("the plugin reports its attempts")
            .text
    };
    let mut trusting = streams_session(&plugin, &dovecot, "streams", true);
    let trusted = report(&mut trusting);
    let (imap, imaps) = (dovecot.imap_port, dovecot.imaps_port);
    for expected in [
        format!("DENIED tls 127.0.0.1:{imap}"),
        format!("DENIED plain 127.0.0.1:{imaps}"),
        format!("CONNECTED tls 127.0.0.1:{imaps}: * OK"),
        "LIMIT connection 4".to_owned(),
        "OPENED 4 at once".to_owned(),
    ] {
        assert!(trusted.contains(&expected), "{expected} in:\n{trusted}");
    }
    assert!(trusting.usage().network_bytes > 0, "bytes are counted");

    // Without the CA, the certificate does not verify, and the guest cannot make it.
    let mut doubting = streams_session(&plugin, &dovecot, "streams", false);
    let doubted = report(&mut doubting);
    assert!(
        doubted.contains(&format!("TLS tls 127.0.0.1:{imaps}"))
            && doubted.contains("did not verify"),
        "{doubted}"
    );
    assert!(!doubted.contains("CONNECTED"), "{doubted}");

    // A connection lives with its instance: a later call may use it, until it has gone unused
    // for 30 s; and it is closed when the instance ends.
    let mut keeping = streams_session(&plugin, &dovecot, "keep", true);
    let kept = keeping.list_docs(None).expect("keep").upserts;
    assert_eq!(kept[0].meta.title, "KEPT");
    let later = keeping
        .fetch_content(&kept[0].id, &kept[0].locator)
        .expect("a later call")
        .text;
    assert!(later.starts_with("READ "), "{later}");
    std::thread::sleep(Duration::from_secs(31));
    let idle = keeping
        .fetch_content(&kept[0].id, &kept[0].locator)
        .expect("a call after 31 s")
        .text;
    assert_eq!(idle, "CLOSED ConnectionError::Closed");
    let disconnects = || dovecot.log().matches("Disconnected").count();
    let before = disconnects();
    let mut ended = streams_session(&plugin, &dovecot, "keep", true);
    assert_eq!(
        ended.list_docs(None).expect("keep").upserts[0].meta.title,
        "KEPT"
    );
    drop(ended);
    let started = Instant::now();
    while disconnects() == before {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the connection outlived its instance:\n{}",
            dovecot.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
