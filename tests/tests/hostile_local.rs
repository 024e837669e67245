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
    fs::write(q.data_dir().join("admin-token"), "0123456789abcdef\n").expect("token");
    for file in ["quarry.db", "admin-token"] {
        fs::set_permissions(q.data_dir().join(file), fs::Permissions::from_mode(0o644))
            .expect("chmod");
    }
    q.cli_ok(&["integration", "list"]);
    assert_eq!(mode(q.data_dir()), 0o700);
    assert_eq!(mode(&q.data_dir().join("index")), 0o700);
    for file in ["quarry.db", "admin-token", "secret.key"] {
        assert_eq!(mode(&q.data_dir().join(file)), 0o600, "{file}");
    }
}

#[test]
fn the_admin_token_is_printed_at_the_first_start_only() {
    let mut q = Quarry::new();
    q.start();
    let token = q.admin_token();
    assert!(q.stdout().contains(&token), "the first start shows it");
    assert!(q.stdout().contains("one-time sign-in link"));
    q.stop();
    q.start();
    let later = q.stdout(); // this start's output only
    assert!(!later.contains(&token), "{later}");
    assert!(!later.contains("/settings/login?code="), "{later}");
    assert!(later.contains("quarry admin link"), "{later}");
    assert!(!q.log().contains(&token));
    // On request, both are there.
    assert_eq!(q.cli_ok(&["admin", "token"]).trim(), token);
    assert!(
        q.cli_ok(&["admin", "link"])
            .contains("/settings/login?code=")
    );
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
