//! A team deployment: several Quarry hosts (each with its own data folder) on one PostgreSQL
//! database, a real server started on loopback as another user.

use std::path::Path;

use quarry_tests::admin::sign_in;
use quarry_tests::postgres as pg;
use quarry_tests::quarry::{Quarry, result_paths};
use serde_json::json;

/// A host of the team: its own data folder and keys folder, the team's database.
fn host(url: &str) -> Quarry {
    let mut quarry = Quarry::new();
    quarry.without_model();
    quarry.on_team_database(url);
    quarry
}

/// Waits (`secs` at most) until `done` holds; the panic says `what` did not happen.
fn until(what: &str, secs: u64, done: &dyn Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not happen"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Copies the sealing key the first host made to another host's keys folder, as an operator
/// does when adding a host.
fn copy_keys(from: &Quarry, to: &Quarry) {
    let to_dir = to.keys_dir();
    std::fs::create_dir_all(&to_dir).expect("keys folder");
    for entry in std::fs::read_dir(from.keys_dir()).expect("the first host's keys") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("a name");
        std::fs::copy(&path, Path::new(&to_dir).join(name)).expect("copy the key");
    }
}

#[test]
fn a_key_made_on_one_host_works_on_the_others_and_a_quota_of_ten_holds_across_three_hosts() {
    let url = pg::shared().new_database();
    let mut hosts: Vec<Quarry> = (0..3).map(|_| host(&url)).collect();
    let key = hosts[0].integration("Team agent", "all", &["--quota", "10"]);

    // A host without the team's sealing key is refused, told which file to copy.
    let refused = hosts[1].cli(&["integration", "list"]);
    assert!(
        !refused.ok,
        "a host without the key opened the team database"
    );
    assert!(
        refused.stderr.contains("copy this file"),
        "{}",
        refused.stderr
    );
    for other in 1..3 {
        let (first, rest) = hosts.split_at(1);
        copy_keys(&first[0], &rest[other - 1]);
    }
    let listed = hosts[2].cli_json(&["integration", "list", "--json"]);
    assert_eq!(listed[0]["name"], "Team agent", "{listed}");

    // Every request counts, whatever its outcome (API.md), so one refused for being one too
    // many of the integration's requests at once would spend one of the ten: that bound is
    // lifted here, to look at the quota alone.
    for host in &mut hosts {
        host.start_with_env(&[("QUARRY_IN_FLIGHT_LIMIT", "100")]);
    }
    // 100 searches at once, spread over the three hosts: exactly the quota's 10 are answered.
    let statuses: Vec<(u16, String)> = std::thread::scope(|scope| {
        let searches: Vec<_> = (0..100)
            .map(|n| {
                let host = &hosts[n % 3];
                let key = &key;
                scope.spawn(move || {
                    let answer = host.search(key, json!({"query": "anything"}));
                    (answer.status, answer.text())
                })
            })
            .collect();
        searches
            .into_iter()
            .map(|s| s.join().expect("a search thread"))
            .collect()
    });
    let answered = statuses.iter().filter(|(status, _)| *status == 200).count();
    let refused: Vec<&(u16, String)> = statuses.iter().filter(|(s, _)| *s != 200).collect();
    assert_eq!(answered, 10, "{statuses:?}");
    assert!(
        refused
            .iter()
            .all(|(status, body)| *status == 429 && body.contains("QUOTA_EXCEEDED")),
        "{refused:?}"
    );
    // A settings-page session begun on one host is good on another.
    let admin = sign_in(&hosts[0]);
    let integrations = admin.call(&hosts[2], "GET", "/admin/v1/integrations", None);
    assert_eq!(integrations.status, 200, "{}", integrations.text());
    assert!(integrations.text().contains("Team agent"));
    // Every host counted into the same month: each request counts, refused ones too.
    let listed = hosts[1].cli_json(&["integration", "list", "--json"]);
    assert_eq!(listed[0]["requests_this_month"], 100, "{listed}");
}

/// Two hosts of a team sharing `url`, the second with the first's sealing key.
fn two_hosts(url: &str) -> (Quarry, Quarry) {
    let first = host(url);
    first.cli_ok(&["integration", "list"]);
    let second = host(url);
    copy_keys(&first, &second);
    (first, second)
}

/// Notes in the folders whose sync takes seconds.
const NOTES: u64 = 20_000;

/// Fills `folder` with [`NOTES`] notes: enough that a first sync takes seconds, in batches with
/// a checkpoint after each.
fn write_notes(folder: &Path) {
    for n in 0..NOTES {
        std::fs::write(
            folder.join(format!("note-{n:05}.md")),
            format!("# Note {n}\n\nThe harbour log entry number {n}.\n"),
        )
        .expect("write a note");
    }
}

#[test]
fn a_sync_cut_off_with_its_host_is_finished_by_the_host_that_takes_the_turn() {
    let url = pg::shared().new_database();
    let (mut first, mut second) = two_hosts(&url);
    let folder = first.scratch("shared-notes");
    write_notes(&folder);
    first.add_folder("Notes", &folder);
    // Every host sees the folder at the same path (a shared mount): any host may sync it.
    first.cli_ok(&["connector", "home", "Notes", "--any"]);
    // One host runs the team's syncs; a host started after it waits for the turn.
    let waiting = |q: &Quarry| q.log().contains("waiting for this host's turn");
    let running = |q: &Quarry| q.log().contains("this host now runs the team's syncs");
    first.start();
    until("the first host taking the turn", 30, &|| running(&first));
    second.start();
    until("the second host waiting", 30, &|| waiting(&second));
    assert!(!running(&second), "both hosts run the syncs");
    // Cut the first host off in the middle of its sync, as a machine that fails.
    let indexed_at_kill = std::cell::Cell::new(0);
    first.wait_for("the sync under way", |connectors| {
        indexed_at_kill.set(connectors[0]["progress"]["indexed"].as_u64().unwrap_or(0));
        indexed_at_kill.get() > 0
    });
    first.kill();
    let indexed_at_kill = indexed_at_kill.get();
    assert!(
        indexed_at_kill < NOTES,
        "the sync ended before the host was cut off"
    );
    second.wait_for("the second host to finish the sync", |connectors| {
        connectors[0]["status"] == "idle"
            && !connectors[0]["last_sync_time"].is_null()
            && connectors[0]["doc_count"] == NOTES
    });
    assert!(running(&second), "{}", second.log());
    // It went on from the first host's last checkpoint: its first sync listed the batches
    // left of the cut-off listing, then the whole fresh listing that follows an interrupted
    // one (20 batches each way), so fewer than two whole listings.
    let log = second.log();
    let batches: u64 = log
        .lines()
        .find(|line| line.contains("sync finished"))
        .and_then(|line| line.split("batches: ").nth(1))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no sync finished in:\n{log}"));
    assert!(
        batches < 2 * NOTES.div_ceil(1024),
        "{batches} batches after {indexed_at_kill} documents were indexed"
    );
}

/// The documents a keyword search for `word` finds on `host` (up to 100), by path.
fn found(host: &Quarry, key: &str, word: &str) -> Vec<String> {
    result_paths(&host.keyword_search(key, word, 100))
}

#[test]
fn a_folder_synced_through_one_host_is_found_through_the_others_each_document_once() {
    let url = pg::shared().new_database();
    let (mut first, mut second) = two_hosts(&url);
    let mut third = host(&url);
    copy_keys(&first, &third);
    let key = first.integration("Team agent", "all", &[]);
    let folder = first.scratch("team-notes");
    for n in 0..40 {
        std::fs::write(
            folder.join(format!("note-{n:02}.md")),
            format!("# Note {n}\n\nThe lighthouse keeper's entry number {n}.\n"),
        )
        .expect("write a note");
    }
    std::fs::write(folder.join("storm.md"), "# Storm\n\nA gale tore the jib.\n").expect("write");
    first.add_folder("Notes", &folder);
    // Every host sees the folder at the same path (a shared mount): any host may sync it.
    first.cli_ok(&["connector", "home", "Notes", "--any"]);
    first.start();
    first.wait_for("the folder synced", |c| {
        c[0]["status"] == "idle" && c[0]["doc_count"] == 41
    });
    second.start();
    third.start();
    // Every host finds every document of the folder, each once, and the same ones.
    let mut expected = found(&first, &key, "lighthouse");
    expected.sort();
    assert_eq!(expected.len(), 40, "{expected:?}");
    for host in [&second, &third] {
        let mut ids = found(host, &key, "lighthouse");
        ids.sort();
        assert_eq!(ids, expected);
        assert_eq!(found(host, &key, "gale"), ["storm.md"]);
    }
    // A change synced by the host holding the turn reaches the others' searches.
    std::fs::remove_file(folder.join("storm.md")).expect("remove a note");
    std::fs::write(folder.join("calm.md"), "# Calm\n\nNo gale today.\n").expect("write");
    third.cli_ok(&["connector", "sync", "Notes"]);
    for host in [&first, &second, &third] {
        until("the change reaching every host", 60, &|| {
            found(host, &key, "gale") == ["calm.md"]
        });
    }
    // The host that synced all this dies: the others keep answering from their copies, one
    // of them takes the turn, and what changes next reaches both.
    first.kill();
    for host in [&second, &third] {
        assert_eq!(found(host, &key, "lighthouse").len(), 40);
    }
    std::fs::write(
        folder.join("tide.md"),
        "# Tide\n\nThe gale eased at the turn of the tide.\n",
    )
    .expect("write");
    for host in [&second, &third] {
        until("a change after the syncing host died", 60, &|| {
            let mut gale = found(host, &key, "gale");
            gale.sort();
            gale == ["calm.md", "tide.md"]
        });
    }
    // A host added later catches up before it answers; one restarted goes on from where its
    // index stood instead of starting over.
    let mut fourth = host(&url);
    copy_keys(&first, &fourth);
    fourth.start();
    assert_eq!(found(&fourth, &key, "lighthouse").len(), 40);
    assert!(
        fourth.log().contains("up to date with the team's"),
        "{}",
        fourth.log()
    );
    second.stop();
    second.start();
    assert_eq!(found(&second, &key, "tide"), ["tide.md"]);
    // Its copy was not emptied, nor filled again from the log's start.
    let log = second.log();
    assert!(
        !log.contains("replaced by the team's index") && !log.contains("from=0 "),
        "{log}"
    );
}

/// Whether `host`'s log shows a sync of the connector named `name` starting.
fn synced_there(host: &Quarry, name: &str) -> bool {
    host.log()
        .lines()
        .any(|l| l.contains("sync started") && l.contains(&format!("connector={name}")))
}

#[test]
fn a_folder_lives_on_the_host_that_added_it_which_alone_syncs_and_watches_it() {
    let url = pg::shared().new_database();
    let (mut first, mut second) = two_hosts(&url);
    let key = first.integration("Team agent", "all", &[]);
    // The first host to start holds the team's sync turn; the folder is the second's.
    first.start();
    let folder = second.scratch("desk");
    std::fs::write(
        folder.join("plan.md"),
        "# Plan\n\nThe regatta starts at noon.\n",
    )
    .expect("write");
    second.add_folder("Desk", &folder);
    second.start();
    for host in [&first, &second] {
        until("the second host's folder found on every host", 60, &|| {
            found(host, &key, "regatta") == ["plan.md"]
        });
    }
    assert!(synced_there(&second, "Desk"), "{}", second.log());
    assert!(!synced_there(&first, "Desk"), "{}", first.log());
    // Its host watches it: a change is found on the other host without asking for a sync.
    std::fs::write(folder.join("crew.md"), "# Crew\n\nSix for the regatta.\n").expect("write");
    until(
        "a change in the folder found on the other host",
        60,
        &|| found(&first, &key, "crew") == ["crew.md"],
    );
    // Without its host nobody reads it (the folder is that machine's), whoever holds the turn...
    second.kill();
    std::fs::write(folder.join("late.md"), "# Late\n\nA late entry.\n").expect("write");
    first.cli_ok(&["connector", "sync", "Desk"]);
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(found(&first, &key, "late").is_empty());
    assert!(!synced_there(&first, "Desk"), "{}", first.log());
    // ...until it is said to live on any host (a shared mount), or on another.
    let moved = first.cli_ok(&["connector", "home", "Desk", "--any"]);
    assert!(moved.contains("any host"), "{moved}");
    until(
        "the folder synced by the host holding the turn",
        60,
        &|| found(&first, &key, "late") == ["late.md"],
    );
    // A host's name is checked wherever it is given: a blank one, one with a control character.
    for bad in [" ", "desk\u{1b}[2Jtop"] {
        let refused = first.cli(&["connector", "home", "Desk", bad]);
        assert!(
            !refused.ok && refused.stderr.contains("is not a host's name"),
            "{}",
            refused.stderr
        );
        let refused = first.cli_with_env(&["integration", "list"], &[("QUARRY_HOST_NAME", bad)]);
        assert!(
            !refused.ok && refused.stderr.contains("--host-name (QUARRY_HOST_NAME)"),
            "{}",
            refused.stderr
        );
    }
}

/// The times `host`'s log shows syncs of the connector named `name` running, from start to end.
fn sync_spans(host: &Quarry, name: &str) -> Vec<(String, String)> {
    let mut spans = Vec::new();
    let mut started = None;
    let connector = format!("connector={name}");
    for line in host.log().lines().filter(|l| l.contains(&connector)) {
        let at = line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        if line.contains("sync started") {
            started = Some(at);
        } else if line.contains("sync finished") || line.contains("sync failed") {
            spans.extend(started.take().map(|s| (s, at)));
        }
    }
    spans.extend(started.map(|s| (s, "running".to_owned())));
    spans
}

#[test]
fn a_connector_is_synced_by_one_host_at_a_time_even_by_hosts_named_alike() {
    let url = pg::shared().new_database();
    let (mut first, mut second) = two_hosts(&url);
    let folder = first.scratch("twin-notes");
    write_notes(&folder);
    first.add_folder("Notes", &folder);
    // Two hosts given one name by mistake: both look after the folder, and both start at once.
    first.cli_ok(&["connector", "home", "Notes", "twin"]);
    let twin = [
        ("QUARRY_HOST_NAME", "twin"),
        ("QUARRY_LOG", "info,quarry_sync=debug"),
    ];
    first.start_with_env(&twin);
    second.start_with_env(&twin);
    first.wait_for("the folder synced", |c| {
        c[0]["status"] == "idle" && c[0]["doc_count"] == NOTES
    });
    let (a, b) = (sync_spans(&first, "Notes"), sync_spans(&second, "Notes"));
    assert!(!a.is_empty() || !b.is_empty(), "nobody synced");
    // RFC 3339 times in UTC compare as text.
    for (start, end) in &a {
        for (other_start, other_end) in &b {
            assert!(
                end <= other_start || other_end <= start,
                "both hosts synced at once: {a:?} and {b:?}"
            );
        }
    }
    let skipped = format!("{}{}", first.log(), second.log());
    assert!(
        skipped.contains("another host of the team is syncing it"),
        "{a:?} {b:?}"
    );
}

#[test]
fn vectors_computed_once_by_the_host_holding_the_turn_find_by_meaning_on_every_host() {
    let url = pg::shared().new_database();
    let mut first = Quarry::new();
    first.on_team_database(&url);
    let key = first.integration("Team agent", "all", &["--quota", "unlimited"]);
    let mut second = Quarry::new();
    second.on_team_database(&url);
    copy_keys(&first, &second);
    let folder = first.scratch("topics");
    quarry_tests::corpus::write(&folder, &quarry_tests::corpus::topics());
    first.add_folder("Topics", &folder);
    first.start();
    first.wait_synced();
    second.start();
    // No word is shared with the document it finds: only the vectors find it, on the host
    // that computed them and on the one that did not.
    let query = json!({"query": "puppy playing fetch outdoors"});
    for host in [&first, &second] {
        let semantic = host.search_ok(&key, query.clone());
        assert_eq!(semantic["mode"], "semantic", "{semantic}");
        assert_eq!(result_paths(&semantic)[0], "pets.txt", "{semantic}");
    }
    // The second host computed none: it holds no turn, and its copy lacks no vector.
    assert!(
        !second.log().contains("this host now runs the team's syncs"),
        "{}",
        second.log()
    );
    let connectors = second.connectors();
    assert_eq!(connectors[0]["embedding"]["pending"], 0, "{connectors:?}");
}

#[test]
fn a_data_folder_moves_into_a_team_database_and_its_key_index_and_counts_carry_on() {
    let mut quarry = Quarry::new();
    quarry.without_model();
    let key = quarry.integration("Desk agent", "all", &["--quota", "50"]);
    let folder = quarry.scratch("notes");
    std::fs::write(
        folder.join("lighthouse.md"),
        "# Lighthouse\n\nThe lighthouse keeper logs every ship.\n",
    )
    .expect("write a note");
    quarry.add_folder("Notes", &folder);
    quarry.start();
    quarry.wait_synced();
    let before = quarry.keyword_search(&key, "lighthouse", 5);
    assert_eq!(
        before["results"].as_array().map(Vec::len),
        Some(1),
        "{before}"
    );
    let url = pg::shared().new_database();
    let busy = quarry.cli(&["migrate", "--to", &url]);
    assert!(
        !busy.ok && busy.stderr.contains("stop it first"),
        "{}",
        busy.stderr
    );
    quarry.stop();

    let copied = quarry.cli_ok(&["migrate", "--to", &url]);
    assert!(copied.contains("documents"), "{copied}");
    assert!(
        copied.contains("1 connector(s) read folders of this machine"),
        "{copied}"
    );
    let again = quarry.cli(&["migrate", "--to", &url]);
    assert!(
        !again.ok && again.stderr.contains("already holds data"),
        "{}",
        again.stderr
    );

    quarry.on_team_database(&url);
    quarry.start();
    assert!(
        quarry.log().contains("replaced by the team's index"),
        "{}",
        quarry.log()
    );
    let after = quarry.keyword_search(&key, "lighthouse", 5);
    let ids = |answer: &serde_json::Value| answer["results"][0]["doc_id"].clone();
    assert_eq!(ids(&after), ids(&before), "{after}");
    assert_eq!(
        after["results"][0]["snippet"],
        before["results"][0]["snippet"]
    );
    let listed = quarry.cli_json(&["integration", "list", "--json"]);
    assert_eq!(listed[0]["name"], "Desk agent");
    assert_eq!(listed[0]["requests_this_month"], 2, "{listed}");
    let connectors = quarry.connectors();
    assert_eq!(connectors[0]["doc_count"], 1, "{connectors:?}");
    // The documents went into the team's index: a new host of the team finds them.
    let mut other = host(&url);
    copy_keys(&quarry, &other);
    other.start();
    let found = other.keyword_search(&key, "lighthouse", 5);
    for field in ["doc_id", "snippet", "score", "highlights"] {
        assert_eq!(
            found["results"][0][field], after["results"][0][field],
            "{found}"
        );
    }
}

#[test]
fn while_the_database_fails_over_requests_are_told_to_retry_and_after_the_standby_is_promoted_writes_resume()
 {
    let mut primary = pg::Postgres::start();
    primary.psql("postgres", "CREATE DATABASE team");
    let mut standby = pg::Postgres::standby_of(&primary);
    let url = primary.url("team");
    let (mut first, mut second) = two_hosts(&url);
    let key = first.integration("Failover agent", "all", &["--quota", "unlimited"]);
    first.start();
    second.start();
    for host in [&first, &second] {
        assert_eq!(host.search(&key, json!({"query": "harbour"})).status, 200);
    }
    // The standby has what the primary had.
    until("the standby catching up", 20, &|| {
        standby.psql("team", "SELECT count(*) FROM integrations") == "1"
    });

    // The primary fails: requests are answered 503 with Retry-After, never a wrong answer.
    let address = primary.port();
    primary.kill();
    for host in [&first, &second] {
        let refused = host.search(&key, json!({"query": "harbour"}));
        assert_eq!(refused.status, 503, "{}", refused.text());
        assert_eq!(refused.json()["error"]["code"], "INTERNAL_ERROR");
        assert!(refused.header("retry-after").is_some());
    }
    // A load balancer's readiness check takes the hosts out meanwhile.
    let not_ready = first.request("GET", "/readyz", None, None);
    assert_eq!(not_ready.status, 503, "{}", not_ready.text());
    assert_eq!(not_ready.json()["status"], "unavailable");
    assert!(not_ready.header("retry-after").is_some());
    // Its address moves to the standby, which still refuses writes until it is promoted.
    standby.restart_on(address);
    let read_only = first.search(&key, json!({"query": "harbour"}));
    assert_eq!(read_only.status, 503, "{}", read_only.text());
    standby.promote();

    // The hosts reconnect by themselves: reads and writes resume on both.
    for host in [&first, &second] {
        let answer = host.search(&key, json!({"query": "harbour"}));
        assert_eq!(answer.status, 200, "{}", answer.text());
    }
    for host in [&first, &second] {
        let ready = host.request("GET", "/readyz", None, None);
        assert_eq!(ready.status, 200, "{}", ready.text());
    }
    second.integration("After failover", "none", &[]);
    let listed = first.cli_json(&["integration", "list", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");
    let names = |q: &Quarry| {
        q.log()
            .matches("this host now runs the team's syncs")
            .count()
    };
    until("a host taking the sync turn again", 30, &|| {
        names(&first) + names(&second) >= 2
    });
}

#[test]
fn the_settings_file_may_name_the_team_database_and_its_password_is_never_shown() {
    let url = pg::shared().new_database();
    let database = url.rsplit('/').next().expect("a name").to_owned();
    let with_password = url.replacen("quarry@", "quarry:s3cret-pw@", 1);
    let mut quarry = Quarry::new();
    quarry.without_model();
    std::fs::write(
        quarry.config_file(),
        format!("database = \"{with_password}\"\n"),
    )
    .expect("write the settings file");
    quarry.integration("From the file", "all", &[]);
    assert_eq!(
        pg::shared().psql(&database, "SELECT name FROM integrations"),
        "From the file"
    );
    assert!(!quarry.data_dir().join("quarry.db").exists());
    let shown = quarry.cli_json(&["config", "--json"]);
    let setting = shown["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .find(|s| s["key"] == "database")
        .expect("database")
        .clone();
    assert_eq!(setting["value"], url.as_str(), "{setting}");
    assert_eq!(setting["origin"], "config.toml line 1");
    assert!(!shown.to_string().contains("s3cret-pw"), "{shown}");
}

#[test]
fn a_wrong_or_unreachable_team_database_is_a_clear_error_naming_it() {
    let mut quarry = Quarry::new();
    quarry.without_model();
    quarry.on_team_database("mysql://somewhere/else");
    let wrong = quarry.cli(&["integration", "list"]);
    assert!(!wrong.ok);
    assert!(
        wrong
            .stderr
            .contains("--database: not a PostgreSQL address"),
        "{}",
        wrong.stderr
    );
    // Nothing listens on this port: the error names the address, without its password.
    let port = quarry_tests::local_servers::free_port();
    quarry.on_team_database(&format!("postgres://quarry:hunter2@127.0.0.1:{port}/team"));
    let unreachable = quarry.cli(&["integration", "list"]);
    assert!(!unreachable.ok);
    assert!(
        unreachable.stderr.contains(&format!(
            "cannot open the database postgres://quarry@127.0.0.1:{port}/team"
        )),
        "{}",
        unreachable.stderr
    );
    assert!(
        !unreachable.stderr.contains("hunter2"),
        "{}",
        unreachable.stderr
    );
}
