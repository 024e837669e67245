//! Hostile plugins, built from source, are stopped or refused with clear errors, and the host
//! goes on serving other plugins.

mod common;

use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use common::{folder_session, list_all, load, quick_limits, runtime, settings};
use quarry_runtime::{Limits, Plugin, Runtime, RuntimeErrorKind, Session};

fn hostile(plugin: &Plugin, pairs: &[(&str, &str)]) -> Session {
    let (values, grant) = settings(plugin, pairs);
    plugin
        .session(&values, &grant, None)
        .expect("session opens")
}

/// The folder plugin still works: the host is unharmed.
fn folder_still_works(runtime: &Runtime) {
    let tmp = tempfile::tempdir().expect("tempdir");
    fs::write(tmp.path().join("a.txt"), "still here").expect("write");
    let folder = load(runtime, "folder", Limits::default());
    let mut session = folder_session(&folder, tmp.path());
    let (docs, _) = list_all(&mut session).expect("folder plugin still lists");
    assert_eq!(docs.len(), 1);
}

#[test]
fn an_infinite_loop_is_stopped_at_the_deadline() {
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    let mut session = hostile(&plugin, &[("mode", "loop")]);
    let started = Instant::now();
    let err = session.list_docs(None).expect_err("loop must be stopped");
    let elapsed = started.elapsed();
    assert!(
        matches!(err.kind(), RuntimeErrorKind::Timeout { .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("plugin hostile: list-docs timed out after 2 s"),
        "{err}"
    );
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(6),
        "{elapsed:?}"
    );
    // The session recovers with a fresh instance.
    assert!(matches!(
        session.list_docs(None).map_err(|e| e.kind),
        Err(RuntimeErrorKind::Timeout { .. })
    ));
    folder_still_works(&runtime);
}

#[test]
fn a_memory_hog_is_stopped_at_its_cap() {
    let runtime = runtime();
    let limits = Limits {
        memory_bytes: 64 << 20,
        ..quick_limits()
    };
    let plugin = load(&runtime, "hostile", limits);
    let err = hostile(&plugin, &[("mode", "hog")])
        .list_docs(None)
        .expect_err("hog must be stopped");
    assert!(
        matches!(err.kind(), RuntimeErrorKind::MemoryLimit { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("memory limit of 64 MiB"), "{err}");
    folder_still_works(&runtime);
}

#[test]
fn a_panic_is_a_trap_with_the_panic_message() {
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    let err = hostile(&plugin, &[("mode", "trap")])
        .list_docs(None)
        .expect_err("trap");
    assert!(matches!(err.kind(), RuntimeErrorKind::Trap { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("plugin hostile: list-docs crashed"),
        "{message}"
    );
    assert!(
        message.contains("hostile plugin panics on purpose"),
        "{message}"
    );
    assert!(err.is_host_stop());
    folder_still_works(&runtime);
}

#[test]
fn oversized_and_malformed_output_is_refused() {
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    let err = hostile(&plugin, &[("mode", "huge-list")])
        .list_docs(None)
        .expect_err("too many documents");
    assert!(
        err.to_string()
            .contains("a batch of 200000 documents; the limit is 10000"),
        "{err}"
    );
    let mut session = hostile(&plugin, &[("mode", "huge-text")]);
    let probe = session.list_docs(None).expect("one probe document").upserts;
    let err = session
        .fetch_content(&probe[0].id, &probe[0].locator)
        .expect_err("too much text");
    assert!(
        matches!(err.kind(), RuntimeErrorKind::Output { .. })
            && err
                .to_string()
                .contains("80 MiB of text; the limit is 64 MiB"),
        "{err}"
    );
    let err = hostile(&plugin, &[("mode", "bad-ids")])
        .list_docs(None)
        .expect_err("bad ids");
    assert!(
        err.to_string()
            .contains("doc_id must be 1 to 128 characters"),
        "{err}"
    );
    folder_still_works(&runtime);
}

#[test]
fn reads_outside_the_granted_folder_are_denied() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&root).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(outside.join("secret.txt"), "TOP SECRET").expect("write");
    fs::write(tmp.path().join("secret.txt"), "TOP SECRET").expect("write");
    fs::write(root.join("inside.txt"), "inside").expect("write");
    symlink(&outside, root.join("link-out")).expect("symlink");
    symlink(outside.join("secret.txt"), root.join("link-file")).expect("symlink");

    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    let path = root.to_string_lossy().into_owned();
    let mut session = hostile(&plugin, &[("mode", "escape"), ("folder", &path)]);
    let probe = session.list_docs(None).expect("probe").upserts;
    let report = session
        .fetch_content(&probe[0].id, &probe[0].locator)
        .expect("the plugin reports its attempts")
        .text;
    assert!(!report.contains("TOP SECRET"), "{report}");
    assert!(
        report.contains("READ /folder/inside.txt: inside"),
        "{report}"
    );
    let reads: Vec<&str> = report.lines().filter(|l| l.starts_with("READ")).collect();
    assert_eq!(
        reads.len(),
        1,
        "only the granted file is readable: {report}"
    );
    assert_eq!(
        report.lines().filter(|l| l.starts_with("DENIED")).count(),
        8,
        "{report}"
    );
    // The host's bulk reads (WIT 0.3.0) let out no more: not even a link that stays inside.
    let bulk_reads: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("BULK READ"))
        .collect();
    assert_eq!(
        bulk_reads,
        ["BULK READ /folder/inside.txt: inside (6 bytes)"],
        "{report}"
    );
    assert_eq!(
        report
            .lines()
            .filter(|l| l.starts_with("BULK DENIED"))
            .count(),
        10,
        "{report}"
    );
}

/// An empty grant blocks all network: sockets, name lookups and `wasi:http` alike.
#[test]
fn network_access_is_denied() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port().to_string();

    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    let mut session = hostile(&plugin, &[("mode", "network"), ("port", &port)]);
    let probe = session.list_docs(None).expect("probe").upserts;
    let report = session
        .fetch_content(&probe[0].id, &probe[0].locator)
        .expect("the plugin reports its attempts")
        .text;
    assert!(
        report.contains(&format!("DENIED tcp 127.0.0.1:{port}")),
        "{report}"
    );
    assert!(report.contains("DENIED dns localhost"), "{report}");
    for host in ["127.0.0.1", "localhost"] {
        assert!(
            report.contains(&format!("DENIED http http://{host}:{port}/"))
                && report.contains("refused a connection"),
            "{report}"
        );
    }
    assert!(!report.contains("CONNECTED"), "{report}");
    assert!(
        listener.accept().is_err(),
        "no connection reached the listener"
    );
}

#[test]
fn a_stuck_plugin_does_not_hold_up_others() {
    let runtime = runtime();
    let stuck = load(&runtime, "hostile", quick_limits());
    let handle = std::thread::spawn(move || hostile(&stuck, &[("mode", "loop")]).list_docs(None));
    let started = Instant::now();
    for _ in 0..5 {
        folder_still_works(&runtime);
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "other plugins ran while one was stuck: {:?}",
        started.elapsed()
    );
    let stuck_result = handle.join().expect("thread joins");
    assert!(matches!(
        stuck_result.map_err(|e| e.kind),
        Err(RuntimeErrorKind::Timeout { .. })
    ));
}

#[test]
fn broken_plugin_folders_are_refused_with_the_reason() {
    let runtime = runtime();
    let tmp = tempfile::tempdir().expect("tempdir");
    let source = quarry_tests::plugin_dir("hostile");
    let manifest = fs::read_to_string(source.join("quarry-plugin.toml")).expect("manifest");
    let wasm = "quarry_hostile.wasm";
    let variant = |name: &str, manifest: &str, with_component: bool| {
        let dir = tmp.path().join(name);
        fs::create_dir_all(&dir).expect("mkdir");
        fs::write(dir.join("quarry-plugin.toml"), manifest).expect("write manifest");
        if with_component {
            fs::copy(source.join(wasm), dir.join(wasm)).expect("copy component");
        }
        dir
    };
    let cases = [
        (
            variant("typo", &format!("{manifest}\ncolour = \"red\"\n"), true),
            "unknown field `colour`",
        ),
        (
            variant("missing", &manifest, false),
            "cannot read the component",
        ),
        (
            variant(
                "wrong-wit",
                &manifest.replace("wit = \"0.5.0\"", "wit = \"0.9.0\""),
                true,
            ),
            "wit = \"0.9.0\" is not a version this host supports (0.1.0, 0.2.0, 0.3.0, 0.4.0, 0.5.0)",
        ),
    ];
    for (dir, expected) in cases {
        let err = runtime
            .load(&dir, Limits::default())
            .err()
            .unwrap_or_else(|| panic!("{} must be refused", dir.display()));
        assert!(
            err.to_string().contains(expected),
            "{err} should say {expected}"
        );
    }
    let not_wasm = variant("not-wasm", &manifest, false);
    fs::write(not_wasm.join(wasm), b"not a component").expect("write");
    let err = runtime
        .load(&not_wasm, Limits::default())
        .err()
        .expect("refused");
    assert!(err.to_string().contains("not a valid component"), "{err}");
}

#[test]
fn a_component_of_another_wit_version_is_refused_naming_both() {
    let runtime = runtime();
    let err = runtime
        .load(&quarry_tests::plugin_dir("wit-next"), Limits::default())
        .err()
        .expect("a component built against 0.99.0 is refused");
    assert!(
        matches!(err.kind(), RuntimeErrorKind::WitVersion { .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("built against quarry:connector@0.99.0")
            && message
                .contains("this host runs quarry:connector@0.1.0, @0.2.0, @0.3.0, @0.4.0, @0.5.0"),
        "{message}"
    );
}

#[test]
fn a_component_missing_an_export_is_refused_naming_it() {
    let runtime = runtime();
    let err = runtime
        .load(&quarry_tests::plugin_dir("partial"), Limits::default())
        .err()
        .expect("a component without read-file is refused");
    assert!(
        matches!(err.kind(), RuntimeErrorKind::WitVersion { .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("lacks read-file, validate-config")
            && message.contains("it has: list-docs, fetch-content"),
        "{message}"
    );
}

#[test]
fn a_plugin_that_sleeps_in_a_wasi_call_is_stopped_at_the_deadline() {
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    let mut session = hostile(&plugin, &[("mode", "sleep")]);
    let started = Instant::now();
    let err = session.list_docs(None).expect_err("the sleep must be cut");
    let elapsed = started.elapsed();
    assert!(
        matches!(err.kind(), RuntimeErrorKind::Timeout { .. }),
        "{err}"
    );
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(3),
        "stopped at the 2 s deadline, not after the hour: {elapsed:?}"
    );
    folder_still_works(&runtime);
}

#[test]
fn a_secret_setting_never_appears_in_an_error_whatever_the_plugin_says() {
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    let secret = "pa55-w0rd-never-shown";
    let err = hostile(&plugin, &[("mode", "echo-secret"), ("secret", secret)])
        .list_docs(None)
        .expect_err("the plugin fails on purpose");
    let text = err.to_string();
    assert!(text.contains("login refused for [secret]"), "{text}");
    assert!(!text.contains(secret), "{text}");
}
