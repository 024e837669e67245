//! The machine around Quarry, against the real binary: nothing is loaded from the working
//! folder, the data folder and its files are the user's alone, the admin token is printed only
//! when it is made, secrets never reach the database in clear, integrations see no host paths,
//! and a disabled connector serves nothing.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use quarry_tests::quarry::{Quarry, binary};
use quarry_tests::web::{WebServer, rss};
use quarry_tests::{corpus, plugin_dir};
use serde_json::json;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

#[test]
fn quarry_started_in_an_untrusted_folder_loads_nothing_from_it() {
    let untrusted = tempfile::tempdir().expect("tempdir");
    let cwd = untrusted.path();
    // What the old defaults would have loaded: a native library and a plugin.
    fs::create_dir_all(cwd.join("models/onnxruntime")).expect("mkdir");
    fs::write(
        cwd.join("models/onnxruntime/libonnxruntime.so"),
        b"not a library",
    )
    .expect("write");
    let planted = cwd.join("target/plugins/planted");
    fs::create_dir_all(&planted).expect("mkdir");
    let hostile = plugin_dir("hostile");
    let manifest = fs::read_to_string(hostile.join("quarry-plugin.toml"))
        .expect("manifest")
        .replace("id = \"hostile\"", "id = \"planted\"");
    fs::write(planted.join("quarry-plugin.toml"), manifest).expect("write");
    fs::copy(
        hostile.join("quarry_hostile.wasm"),
        planted.join("quarry_hostile.wasm"),
    )
    .expect("copy");

    let data = tempfile::tempdir().expect("tempdir");
    let quarry = |args: &[&str]| {
        Command::new(binary())
            .current_dir(cwd)
            .arg("--data-dir")
            .arg(data.path().join("q"))
            .args(args)
            .env("QUARRY_COMPONENT_CACHE", quarry_tests::component_cache())
            .env("QUARRY_LOG", "info")
            .env_remove("QUARRY_PLUGINS_DIR")
            .env_remove("QUARRY_MODEL_DIR")
            .env_remove("QUARRY_ORT_LIB")
            .env_remove("QUARRY_DATA_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("quarry runs")
    };
    let list = quarry(&["plugin", "list", "--json"]);
    assert!(list.status.success());
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(!listed.contains("planted"), "{listed}");
    let search = quarry(&["search", "anything", "--semantic"]);
    let said = String::from_utf8_lossy(&search.stderr);
    assert!(
        !said.contains(&cwd.display().to_string()),
        "nothing was looked for in the working folder: {said}"
    );
    assert!(
        said.contains(&data.path().join("q/models").display().to_string()),
        "the model is looked for in the data folder: {said}"
    );
}

#[test]
fn an_existing_data_folder_and_its_files_are_made_the_users_alone() {
    let q = Quarry::new();
    // A data folder as an older Quarry (or a hand) left it: open to the group and others.
    fs::create_dir_all(q.data_dir().join("index")).expect("mkdir");
    q.cli_ok(&["integration", "list"]);
    for path in [q.data_dir().to_path_buf(), q.data_dir().join("index")] {
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    fs::write(q.data_dir().join("server-url"), "http://127.0.0.1:4747\n").expect("write");
    for file in ["quarry.db", "server-url"] {
        fs::set_permissions(q.data_dir().join(file), fs::Permissions::from_mode(0o644))
            .expect("chmod");
    }
    fs::set_permissions(q.keys_dir(), fs::Permissions::from_mode(0o755)).expect("chmod");
    q.cli_ok(&["integration", "list"]);
    assert_eq!(mode(q.data_dir()), 0o700);
    assert_eq!(mode(&q.data_dir().join("index")), 0o700);
    for file in ["quarry.db", "server-url"] {
        assert_eq!(mode(&q.data_dir().join(file)), 0o600, "{file}");
    }
    // The sealing key lives outside the data folder, in a folder of the user's alone.
    assert!(!q.data_dir().join("secret.key").exists());
    assert_eq!(mode(&q.keys_dir()), 0o700);
    for key in fs::read_dir(q.keys_dir()).expect("keys") {
        assert_eq!(mode(&key.expect("key").path()), 0o600);
    }
}

#[test]
fn the_admin_token_is_printed_at_the_first_start_only_and_kept_nowhere() {
    let mut q = Quarry::new();
    q.start();
    let token = q.printed_admin_token().expect("the first start shows it");
    assert!(q.stdout().contains("one-time sign-in link"));
    assert_eq!(sign_in(&q, &token), 200, "it signs in");
    q.stop();
    q.start();
    let later = q.stdout(); // this start's output only
    assert!(!later.contains(&token), "{later}");
    assert!(!later.contains("/settings/login?code="), "{later}");
    assert!(later.contains("quarry admin link"), "{later}");
    assert!(!q.log().contains(&token));
    // Quarry keeps only its hash: the token is in no file of the data folder or the keys.
    for folder in [q.data_dir().to_path_buf(), q.keys_dir()] {
        for file in quarry_tests::corpus::files_under(&folder) {
            let bytes = fs::read(&file).unwrap_or_default();
            assert!(
                !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
                "{} holds the token",
                file.display()
            );
        }
    }
    // On request: a new token (the old one stops signing in), and a one-time link.
    let new = q.cli_ok(&["admin", "token"]).trim().to_owned();
    assert_ne!(new, token);
    assert_eq!(sign_in(&q, &token), 401);
    assert_eq!(sign_in(&q, &new), 200);
    assert!(
        q.cli_ok(&["admin", "link"])
            .contains("/settings/login?code=")
    );
}

#[test]
fn a_data_folder_of_an_older_quarry_loses_its_clear_token_and_key_at_the_next_start() {
    let mut q = Quarry::new();
    q.cli_ok(&["integration", "list"]);
    // As an older Quarry left it: the admin token and the sealing key in clear beside the
    // database.
    let old_token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    fs::write(q.data_dir().join("admin-token"), format!("{old_token}\n")).expect("token");
    let keys: Vec<_> = fs::read_dir(q.keys_dir())
        .expect("keys")
        .flatten()
        .collect();
    assert_eq!(keys.len(), 1);
    fs::rename(keys[0].path(), q.data_dir().join("secret.key")).expect("move the key back");
    q.start();
    assert!(!q.data_dir().join("admin-token").exists());
    assert!(!q.data_dir().join("secret.key").exists());
    assert_eq!(
        fs::read_dir(q.keys_dir()).expect("keys").count(),
        1,
        "the key moved"
    );
    assert_eq!(sign_in(&q, old_token), 401, "the old token signs nobody in");
    assert!(
        q.log().contains("no longer kept in the data folder"),
        "{}",
        q.log()
    );
    let token = q.printed_admin_token().expect("a new token is shown once");
    assert_eq!(sign_in(&q, &token), 200);
}

/// Posts the sign-in form with `token`; returns the status (200 signs in, 401 does not).
fn sign_in(q: &Quarry, token: &str) -> u16 {
    let body = format!("token={token}");
    let response = q.raw(&quarry_tests::http::build(
        "POST",
        "/settings/login",
        &q.addr,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        body.as_bytes(),
    ));
    response.status
}

#[test]
fn a_password_setting_is_sealed_at_rest_and_integrations_see_no_host_paths() {
    let feed = WebServer::start();
    let password = "pw-7731-sealed-at-rest";
    feed.put(
        "/feed.xml",
        "application/rss+xml",
        &rss(&[("a1", "Quarterly report", "Revenue grew.")]),
    );
    feed.require_basic("reader", password);
    let mut q = Quarry::new();
    q.cli_with_input(
        &[
            "connector",
            "add",
            "plugin",
            "feed",
            "--name",
            "Feed",
            "--set",
            &format!("feed_url={}", feed.url("/feed.xml")),
            "--set",
            "username=reader",
            "--set",
            "password=-",
        ],
        &format!("{password}\n"),
    );
    // A folder connector whose folder goes away: its error names the path, for the user.
    let gone = q.scratch("gone-folder");
    fs::write(gone.join("a.txt"), "text").expect("write");
    q.add_folder("Gone", &gone);
    fs::remove_dir_all(&gone).expect("remove");
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.start();
    q.wait_for("both synced once", |cs| {
        cs.iter().all(|c| !c["last_sync_time"].is_null())
    });
    q.stop();

    let mut database = Vec::new();
    for entry in fs::read_dir(q.data_dir()).expect("data folder") {
        let path = entry.expect("entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("quarry.db"))
        {
            database.extend(fs::read(&path).expect("read"));
        }
    }
    let database = String::from_utf8_lossy(&database);
    assert!(
        database.contains("reader"),
        "the test reads the real database"
    );
    assert!(!database.contains(password), "the password is sealed");

    // The user sees the full reason; an integration sees what kind of failure it was.
    q.start();
    let mine = q.connectors();
    let mine = mine.iter().find(|c| c["name"] == "Gone").expect("Gone");
    let full = mine["last_error"].as_str().expect("an error");
    assert!(full.contains("gone-folder"), "{full}");
    let theirs = q
        .request("GET", "/api/v1/connectors", Some(&key), None)
        .json();
    let theirs = theirs["connectors"]
        .as_array()
        .expect("connectors")
        .iter()
        .find(|c| c["name"] == "Gone")
        .expect("Gone")
        .clone();
    let public = theirs["last_error"].as_str().expect("an error");
    assert!(public.starts_with("the last sync failed"), "{public}");
    assert!(!public.contains('/'), "no path: {public}");
    assert!(!q.log().contains(password));
}

#[test]
fn a_disabled_connector_serves_nothing() {
    let mut q = Quarry::new();
    let ids = q.serve_folders(&[("Notes", corpus::notes())]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    let hit = q
        .search(&key, json!({"query": "milk", "semantic_search": false}))
        .json();
    let doc = hit["results"][0]["doc_id"]
        .as_str()
        .expect("doc")
        .to_owned();
    let paths = [
        format!("/api/v1/connectors/{}/docs/{doc}", ids[0]),
        format!("/api/v1/connectors/{}/docs/{doc}/file", ids[0]),
    ];
    for path in &paths {
        assert_eq!(q.request("GET", path, Some(&key), None).status, 200);
    }
    q.cli_ok(&["connector", "disable", "Notes"]);
    for path in &paths {
        let answer = q.request("GET", path, Some(&key), None);
        assert_eq!(answer.status, 404, "{path}");
        assert!(answer.text().contains("disabled"), "{}", answer.text());
    }
    let found = q
        .search(&key, json!({"query": "milk", "semantic_search": false}))
        .json();
    assert_eq!(found["results"].as_array().map(Vec::len), Some(0));
}
