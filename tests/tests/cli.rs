//! The `quarry` command line: the forms scripts rely on, with and without a running server, and
//! a running server picking up what the CLI changes.

use std::time::{Duration, Instant};

use quarry_tests::corpus;
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|v| v["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn every_command_works_without_a_server() {
    let q = Quarry::new();
    let notes = q.scratch("notes");
    corpus::write(&notes, &corpus::notes());

    let added = q.cli_json(&[
        "connector",
        "add",
        "folder",
        &notes.to_string_lossy(),
        "--name",
        "Notes",
        "--json",
    ]);
    assert!(
        added["connector_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("cn_")),
        "{added}"
    );
    assert_eq!(added["name"], "Notes");
    let dup = q.cli(&[
        "connector",
        "add",
        "folder",
        &notes.to_string_lossy(),
        "--name",
        "NOTES",
    ]);
    assert!(
        !dup.ok && dup.stderr.contains("already exists"),
        "{}",
        dup.stderr
    );
    let missing = q.cli(&[
        "connector",
        "add",
        "folder",
        "/no/such/folder",
        "--name",
        "Ghost",
    ]);
    assert!(
        !missing.ok && missing.stderr.contains("/no/such/folder"),
        "{}",
        missing.stderr
    );

    let synced = q.cli_ok(&["connector", "sync", "Notes", "--wait"]);
    assert!(synced.contains("6 listed, 6 indexed"), "{synced}");
    let list = q.cli_json(&["connector", "list", "--json"]);
    assert_eq!(list[0]["doc_count"], 6);
    assert_eq!(list[0]["status"], "idle");

    let created = q.cli_json(&[
        "integration",
        "create",
        "Claude",
        "--share",
        "all",
        "--json",
    ]);
    let keys: Vec<&str> = created
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["integration", "api_key", "docs", "mcp_config"]);
    assert_eq!(created["integration"]["name"], "Claude");
    let key = created["api_key"].as_str().expect("api_key");
    assert_eq!(
        created["mcp_config"]["mcpServers"]["quarry"]["headers"]["Authorization"],
        format!("Bearer {key}")
    );
    assert!(
        created["docs"]
            .as_str()
            .is_some_and(|d| d.contains(created["api_key"].as_str().unwrap_or("?"))),
        "the JSON answer carries the documentation with the key, as the settings page's does"
    );
    assert!(
        created["api_key"]
            .as_str()
            .is_some_and(|k| k.starts_with("qry_"))
    );
    let human = q.cli_ok(&[
        "integration",
        "create",
        "Script",
        "--share",
        "notes",
        "--quota",
        "500",
    ]);
    assert!(
        human.contains("qry_") && human.contains("shown only now"),
        "{human}"
    );
    let unknown = q.cli(&["integration", "create", "Bad", "--share", "Nope"]);
    assert!(
        !unknown.ok && unknown.stderr.contains("known: Notes"),
        "{}",
        unknown.stderr
    );
    let bad_quota = q.cli(&[
        "integration",
        "create",
        "Bad",
        "--share",
        "all",
        "--quota",
        "lots",
    ]);
    assert!(
        !bad_quota.ok && bad_quota.stderr.contains("whole number or unlimited"),
        "{}",
        bad_quota.stderr
    );

    let integrations = q.cli_json(&["integration", "list", "--json"]);
    assert_eq!(names(&integrations), ["Claude", "Script"]);
    assert_eq!(integrations[1]["sharing"]["mode"], "selected");
    assert_eq!(integrations[1]["sharing"]["connectors"][0]["name"], "Notes");
    assert_eq!(integrations[1]["monthly_quota"], 500);
    assert!(
        !q.cli_ok(&["integration", "list"]).contains("qry_"),
        "keys are never listed"
    );

    let rotated = q.cli_json(&["integration", "rotate", "claude", "--json"]);
    assert_ne!(rotated["api_key"], created["api_key"]);
    q.cli_ok(&["integration", "share", "Claude", "none"]);
    q.cli_ok(&["integration", "quota", "Claude", "unlimited"]);
    let claude = &q.cli_json(&["integration", "list", "--json"])[0];
    assert_eq!(
        (claude["sharing"].clone(), claude["monthly_quota"].clone()),
        (json!({ "mode": "declined" }), json!("unlimited"))
    );
    assert!(
        q.cli_ok(&["integration", "revoke", "Claude"])
            .contains("Revoked 1 key")
    );
    assert_eq!(
        q.cli_json(&["integration", "list", "--json"])[0]["active_keys"],
        0
    );

    let found = q.cli_json(&["search", "revenue costs", "--json", "--limit", "3"]);
    assert_eq!(found["results"].as_array().map(Vec::len), Some(3));
    assert_eq!(found["total"], 4);
    assert!(q.cli_ok(&["search", "crème"]).contains("café menu.txt"));

    assert!(
        q.cli_ok(&["connector", "remove", "notes"])
            .contains("and its documents")
    );
    assert_eq!(q.cli_json(&["search", "revenue", "--json"])["total"], 0);
    assert_eq!(q.cli_json(&["connector", "list", "--json"]), json!([]));
}

#[test]
fn a_running_server_picks_up_cli_changes_within_two_seconds() {
    let mut q = Quarry::new();
    let notes = q.scratch("notes");
    corpus::write(&notes, &corpus::notes());
    q.start();
    let key = q.integration("Agent", "all", &[]);
    let search = |query: &str| {
        q.search(
            &key,
            json!({"query": query, "limit": 100, "semantic_search": false}),
        )
    };

    // A connector added while the server runs is synced at once.
    let started = Instant::now();
    q.add_folder("Notes", &notes);
    q.wait_for("the new connector synced", |c| {
        c.first()
            .is_some_and(|c| c["doc_count"] == 6 && c["status"] == "idle")
    });
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(search("revenue").json()["total"], 4);

    // `connector sync --wait` asks the server and waits for it.
    std::fs::write(notes.join("new.txt"), "a brand new zebra note").expect("write");
    let out = q.cli_ok(&["connector", "sync", "Notes", "--wait"]);
    assert!(out.contains("7 documents"), "{out}");
    assert_eq!(search("zebra").json()["total"], 1);
    // The CLI reads the index while the server writes it.
    assert_eq!(q.cli_json(&["search", "zebra", "--json"])["total"], 1);

    // A revoked key stops working on its next request; a rotated one works at once.
    let rotated = q.cli_json(&["integration", "rotate", "Agent", "--json"]);
    assert_eq!(search("zebra").status, 401);
    let new_key = rotated["api_key"].as_str().expect("key").to_owned();
    assert_eq!(q.search(&new_key, json!({"query": "zebra"})).status, 200);

    // A removed connector disappears from search at once and is purged from the index.
    q.cli_ok(&["connector", "remove", "Notes"]);
    assert_eq!(
        q.search(&new_key, json!({"query": "zebra"})).json()["total"],
        0
    );
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let listed = q.cli_json(&["search", "zebra", "--json"]);
        if listed["total"] == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "purged within 2 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn connectors_sync_on_their_schedule_and_list_everything_when_asked() {
    let mut q = Quarry::new();
    let notes = q.scratch("notes");
    corpus::write(&notes, &corpus::notes());
    q.add_folder("Notes", &notes);
    q.start();
    q.wait_synced();
    let status = |q: &Quarry| q.cli_json(&["connector", "status", "Notes", "--json"]);
    let first = status(&q);
    assert_eq!(first["failed_documents"], json!([]));
    assert!(first["last_full_sync_time"].is_string(), "{first}");

    let bad = q.cli(&["connector", "schedule", "Notes", "--every", "5"]);
    assert!(!bad.ok && bad.stderr.contains("unit"), "{}", bad.stderr);
    let out = q.cli_ok(&["connector", "schedule", "Notes", "--every", "10s"]);
    assert!(out.contains("every 10 s"), "{out}");

    // Nothing changes in the folder, and a sync still comes when its interval has passed.
    let before = first["last_sync_time"].clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = status(&q);
        if now["last_sync_time"] != before && now["status"] == "idle" {
            break;
        }
        assert!(Instant::now() < deadline, "no scheduled sync: {now}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // A full listing on request, followed to its end.
    let full_before = status(&q)["last_full_sync_time"].clone();
    let out = q.cli_ok(&["connector", "sync", "Notes", "--full", "--wait"]);
    assert!(out.contains("Synced"), "{out}");
    let after = status(&q);
    assert_ne!(after["last_full_sync_time"], full_before, "{after}");
    assert_eq!(after["doc_count"], 6);
}

#[test]
fn settings_actions_work_from_the_cli_too() {
    let q = Quarry::new();
    let notes = q.scratch("notes");
    corpus::write(&notes, &corpus::notes());
    q.add_folder("Notes", &notes);

    // Generated docs: with the key when made, with a placeholder afterwards.
    let created = q.cli_ok(&[
        "integration",
        "create",
        "Agent",
        "--share",
        "Notes",
        "--docs",
    ]);
    let key = created
        .split_whitespace()
        .find(|w| w.starts_with("qry_"))
        .expect("a key")
        .to_owned();
    assert!(created.contains(&format!("Authorization: Bearer {key}")));
    assert!(created.contains("Connectors shared: Notes (cn_"));
    let docs = q.cli_ok(&[
        "integration",
        "docs",
        "agent",
        "--url",
        "http://127.0.0.1:9",
    ]);
    assert!(docs.contains("Base URL: http://127.0.0.1:9/api/v1"));
    assert!(docs.contains("Bearer $QUARRY_API_KEY"));
    assert!(!docs.contains(&key));
    let missing = q.cli(&["integration", "docs", "Nobody"]);
    assert!(!missing.ok);
    assert!(
        missing.stderr.contains("known: Agent"),
        "{}",
        missing.stderr
    );

    // Disable and enable.
    assert!(
        q.cli_ok(&["connector", "disable", "Notes"])
            .contains("Disabled")
    );
    assert_eq!(q.connectors()[0]["status"], "disabled");
    let refused = q.cli(&["connector", "sync", "Notes"]);
    assert!(
        refused.stderr.contains("enable it first"),
        "{}",
        refused.stderr
    );
    q.cli_ok(&["connector", "enable", "Notes"]);
    assert_eq!(q.connectors()[0]["status"], "idle");

    // A plugin that comes with Quarry cannot be installed over: its id is taken.
    let folder_plugin = quarry_tests::plugin_dir("folder");
    let shadowing = q.cli(&[
        "plugin",
        "install",
        &folder_plugin.to_string_lossy(),
        "--yes",
    ]);
    assert!(!shadowing.ok);
    assert!(
        shadowing
            .stderr
            .contains("belongs to a plugin that comes with Quarry"),
        "{}",
        shadowing.stderr
    );
    assert!(!q.data_dir().join("plugins/folder").exists());

    // Plugins: install shows what it asks for; without a terminal it needs --yes.
    let hostile_plugin = quarry_tests::plugin_dir("hostile");
    let hostile_plugin = hostile_plugin.to_string_lossy();
    let asked = q.cli(&["plugin", "install", &hostile_plugin]);
    assert!(!asked.ok);
    assert!(asked.stdout.contains("read-only"), "{}", asked.stdout);
    assert!(asked.stderr.contains("--yes"), "{}", asked.stderr);
    assert!(!q.data_dir().join("plugins/hostile").exists());
    let installed = q.cli_ok(&["plugin", "install", &hostile_plugin, "--yes"]);
    assert!(installed.contains("Installed Hostile"), "{installed}");
    let list = q.cli_json(&["plugin", "list", "--json"]);
    assert!(
        list.as_array()
            .expect("list")
            .iter()
            .any(|p| p["id"] == "hostile"
                && p["folder"]
                    .as_str()
                    .is_some_and(|f| f.ends_with("plugins/hostile"))),
        "{list}"
    );
    let wrong = q.scratch("not-a-plugin");
    let failed = q.cli(&["plugin", "install", &wrong.to_string_lossy(), "--yes"]);
    assert!(
        failed.stderr.contains("quarry-plugin.toml"),
        "{}",
        failed.stderr
    );

    // A new admin token on request, shown once: each replaces the last.
    let token = q.cli_ok(&["admin", "token"]);
    assert_eq!(token.trim().len(), 43);
    assert_ne!(q.cli_ok(&["admin", "token"]), token);
}

#[test]
fn a_plugin_folder_whose_files_are_devices_or_fifos_is_refused_in_bounded_time_and_memory() {
    let q = Quarry::new();
    let scratch = q.scratch("plugins");
    let zero = scratch.join("zero");
    std::fs::create_dir(&zero).expect("mkdir");
    std::os::unix::fs::symlink("/dev/zero", zero.join("quarry-plugin.toml")).expect("symlink");
    let fifo = scratch.join("fifo");
    std::fs::create_dir(&fifo).expect("mkdir");
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.join("quarry-plugin.toml"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    // A manifest that names a component that is /dev/zero.
    let component = scratch.join("component");
    std::fs::create_dir(&component).expect("mkdir");
    std::fs::write(
        component.join("quarry-plugin.toml"),
        "id = \"zero\"\nname = \"Zero\"\nversion = \"0.1.0\"\nwit = \"0.1.0\"\ndescription = \"A component of endless zeros\"\ncomponent = \"zero.wasm\"\n",
    )
    .expect("write");
    std::os::unix::fs::symlink("/dev/zero", component.join("zero.wasm")).expect("symlink");
    for folder in [&zero, &fifo, &component] {
        let path = folder.to_string_lossy();
        for args in [
            vec!["plugin", "install", &path, "--yes"],
            vec!["plugin", "check", &path],
        ] {
            let started = Instant::now();
            let (out, peak_kib) = q.cli_watched(&args, Duration::from_secs(30));
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{args:?} took {:?}",
                started.elapsed()
            );
            assert!(!out.ok, "{args:?}: {}", out.stdout);
            let said = format!("{}{}", out.stdout, out.stderr);
            assert!(
                said.contains("not a regular file") || said.contains("larger than"),
                "{args:?}: {said}"
            );
            // No gigabytes of zeros read: the command stayed small.
            assert!(peak_kib < 512 << 10, "{args:?} held {peak_kib} KiB");
        }
    }
}

#[test]
fn a_command_whose_output_pipe_closes_ends_quietly() {
    let q = Quarry::new();
    // Thousands of lines into `head -n 1`: the pipe closes long before the last.
    let (program, args, env) = q.invocation(&["generate", "bash"]);
    let quoted: Vec<String> = std::iter::once(program)
        .chain(args)
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{} | head -n 1", quoted.join(" ")))
        .env_clear()
        .envs(env)
        .output()
        .expect("sh runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}
