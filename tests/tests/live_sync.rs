//! A watched folder, live: the real server and the real folder plugin, with changes made while
//! it runs. Each change must reach search within 2 seconds of the file operation.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

/// How soon a change must be searchable.
const WITHIN: Duration = Duration::from_secs(2);

struct Live {
    q: Quarry,
    key: String,
    dir: PathBuf,
}

fn live(files: &[(&str, &str)]) -> Live {
    let mut q = Quarry::new();
    q.honour_file_permissions();
    let dir = q.scratch("watched");
    for (rel, text) in files {
        write(&dir.join(rel), text);
    }
    q.add_folder("Watched", &dir);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    // The test polls search as fast as the server answers, to time each change to the
    // millisecond: far above the request rate an integration may keep up by default.
    q.start_with_env(&[("QUARRY_RATE_LIMIT", "100000")]);
    q.wait_synced();
    Live { q, key, dir }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

impl Live {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Paths found for `word` (keyword search), sorted.
    fn found(&self, word: &str) -> Vec<String> {
        let body = json!({"query": word, "semantic_search": false, "limit": 50});
        let response = self.q.search(&self.key, body);
        assert_eq!(response.status, 200, "{}", response.text());
        let mut paths: Vec<String> = response.json()["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["path"].as_str().unwrap_or_default().to_owned())
            .collect();
        paths.sort();
        paths
    }

    /// Waits until `word` finds exactly `expected`, at most [`WITHIN`] after `since` (the file
    /// operation); returns how long it took.
    fn reflected(&self, what: &str, since: Instant, word: &str, expected: &[&str]) -> Duration {
        loop {
            let found = self.found(word);
            let elapsed = since.elapsed();
            if found == expected {
                println!("{what}: searchable after {} ms", elapsed.as_millis());
                return elapsed;
            }
            assert!(
                elapsed < WITHIN,
                "{what}: {word:?} finds {found:?}, not {expected:?}, {} ms after the change\n\
                 connectors: {:?}\nserver log:\n{}",
                elapsed.as_millis(),
                self.q.connectors(),
                self.q.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn connector(&self) -> Value {
        self.q.connectors().remove(0)
    }
}

#[test]
fn every_kind_of_change_reaches_search_within_two_seconds() {
    let l = live(&[
        ("a.md", "alphaword first note"),
        ("notes/b.md", "bravoword second note"),
        ("notes/c.txt", "charlieword third note"),
        ("notes/d.md", "deltaword fourth note"),
        ("archive/keep.md", "keepword"),
    ]);
    assert_eq!(l.found("alphaword"), ["a.md"]);
    let count = |l: &Live| l.connector()["doc_count"].as_u64().expect("doc_count");
    assert_eq!(count(&l), 5);

    let t = Instant::now();
    write(&l.path("a.md"), "alphaword first note, now with echoword");
    l.reflected("edit", t, "echoword", &["a.md"]);
    // The folder plugin lists what changed at the paths the watcher saw (WIT 0.2.0): a saved
    // file costs a look at that file, not a listing of the folder.
    l.q.wait_for("the edit's sync", |c| c[0]["status"] == "idle");
    assert_eq!(l.connector()["progress"]["listed"], 1, "{}", l.connector());

    let t = Instant::now();
    write(&l.path("notes/new.md"), "foxtrotword brand new");
    l.reflected("create", t, "foxtrotword", &["notes/new.md"]);

    let t = Instant::now();
    fs::remove_file(l.path("notes/c.txt")).expect("rm");
    l.reflected("delete", t, "charlieword", &[]);

    let t = Instant::now();
    fs::rename(l.path("a.md"), l.path("a-renamed.md")).expect("rename");
    l.reflected("rename", t, "alphaword", &["a-renamed.md"]);

    let t = Instant::now();
    fs::rename(l.path("notes/b.md"), l.path("archive/b.md")).expect("move");
    l.reflected("move to another folder", t, "bravoword", &["archive/b.md"]);

    // An editor's save: the new text goes to a hidden temporary file, renamed over the original.
    let t = Instant::now();
    write(
        &l.path("archive/.b.md.swp"),
        "bravoword saved by rename with golfword",
    );
    fs::rename(l.path("archive/.b.md.swp"), l.path("archive/b.md")).expect("save by rename");
    l.reflected("save by rename", t, "golfword", &["archive/b.md"]);
    assert_eq!(
        l.found("bravoword"),
        ["archive/b.md"],
        "one document, not two"
    );

    let t = Instant::now();
    fs::remove_file(l.path("notes/d.md")).expect("rm");
    write(
        &l.path("notes/d.md/inner.md"),
        "hotelword inside a folder named d.md",
    );
    l.reflected(
        "file replaced by a folder",
        t,
        "hotelword",
        &["notes/d.md/inner.md"],
    );
    l.reflected("the replaced file is gone", t, "deltaword", &[]);

    let t = Instant::now();
    fs::rename(l.path("archive"), l.path("moved-archive")).expect("move folder");
    l.reflected("folder renamed", t, "keepword", &["moved-archive/keep.md"]);
    l.reflected("its files follow", t, "golfword", &["moved-archive/b.md"]);
    // The folder is watched under its new name, and a folder made now is watched too.
    let t = Instant::now();
    write(
        &l.path("moved-archive/later.md"),
        "julietword written after the move",
    );
    l.reflected(
        "a file in the moved folder",
        t,
        "julietword",
        &["moved-archive/later.md"],
    );
    fs::create_dir(l.path("fresh")).expect("mkdir");
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    write(&l.path("fresh/first.md"), "limaword in a new folder");
    l.reflected("a file in a new folder", t, "limaword", &["fresh/first.md"]);

    // A burst: many files at once become one or a few syncs, all of them searchable.
    let t = Instant::now();
    for i in 0..200 {
        write(
            &l.path(&format!("burst/{i:03}.md")),
            &format!("burstword item{i}"),
        );
    }
    l.reflected("a burst of 200 files", t, "item199", &["burst/199.md"]);
    l.q.wait_for("the burst synced", |c| c[0]["doc_count"] == 207);

    let c = l.connector();
    assert_eq!(c["status"], "idle", "{c}");
    assert!(c["last_error"].is_null(), "{c}");

    // A sync reads every changed file: reads are not changes, so it never wakes itself.
    std::thread::sleep(Duration::from_millis(500));
    let settled = l.connector()["last_sync_time"].clone();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        l.connector()["last_sync_time"],
        settled,
        "no sync without a change"
    );
}

#[test]
fn unreadable_files_are_found_by_name_recorded_and_read_once_allowed() {
    let l = live(&[("open.md", "openword readable")]);
    // The file arrives unreadable (made so outside the folder, then moved in).
    let staged = l.q.scratch("staging").join("locked.md");
    write(&staged, "lockedword hidden text");
    fs::set_permissions(&staged, fs::Permissions::from_mode(0o000)).expect("chmod");
    let t = Instant::now();
    fs::rename(&staged, l.path("locked.md")).expect("move in");
    l.reflected("an unreadable file, by name", t, "locked", &["locked.md"]);
    assert!(l.found("lockedword").is_empty(), "its text was never read");
    l.q.wait_for("the sync finished", |c| c[0]["status"] == "idle");
    let status = l.q.cli_json(&["connector", "status", "Watched", "--json"]);
    assert_eq!(
        status["status"], "idle",
        "one unreadable file never fails a sync"
    );
    let failed = status["failed_documents"].as_array().expect("list");
    assert_eq!(failed.len(), 1, "{status}");
    assert_eq!(failed[0]["path"], "locked.md");
    let reason = failed[0]["error"].as_str().expect("reason");
    assert!(reason.contains("ermission denied"), "{reason}");
    assert_eq!(l.found("openword"), ["open.md"], "the rest is indexed");

    // Read permission given: the text is read at once.
    let t = Instant::now();
    fs::set_permissions(l.path("locked.md"), fs::Permissions::from_mode(0o644)).expect("chmod");
    l.reflected("permission given back", t, "lockedword", &["locked.md"]);
    l.q.wait_for("the sync finished", |c| c[0]["status"] == "idle");
    let status = l.q.cli_json(&["connector", "status", "Watched", "--json"]);
    assert_eq!(status["failed_documents"], json!([]), "{status}");
}

#[test]
fn a_link_or_a_mount_of_the_data_folders_parent_in_a_watched_folder_never_wakes_a_sync() {
    let mut q = Quarry::new();
    q.without_model();
    let dir = q.scratch("watched");
    write(&dir.join("notes.md"), "The plain note about the garden.\n");
    // The folder above the data folder (which holds the data folder and this folder too), as a
    // cloned repository could link it, and as a bind mount shows it (same disk, same inodes,
    // another path) to every quarry process.
    let above = q.data_dir().parent().expect("parent").to_owned();
    std::os::unix::fs::symlink(&above, dir.join("up")).expect("symlink");
    let mounted = dir.join("mounted");
    fs::create_dir(&mounted).expect("mount point");
    let command =
        quarry_tests::quarry::in_mount_namespace("mount --bind \"$1\" \"$2\"", &[&above, &mounted]);
    q.run_through(&command.iter().map(String::as_str).collect::<Vec<_>>());
    q.add_folder("Watched", &dir);
    q.start();
    q.wait_synced();
    // Idle for a minute: each sync writes the data folder; were the link followed or the mount
    // entered, each write would ask for the next sync (several a second).
    let mut syncs = std::collections::BTreeSet::new();
    let idle = Instant::now();
    while idle.elapsed() < Duration::from_secs(60) {
        let connector = q.connectors().remove(0);
        syncs.insert(connector["last_sync_time"].to_string());
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        syncs.len() <= 2,
        "{} different last sync times in a minute of idleness, the first {:?}",
        syncs.len(),
        syncs.iter().take(5).collect::<Vec<_>>()
    );
    // Neither was watched, and changes in the folder itself still are.
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    write(&dir.join("later.md"), "A later note about the orchard.\n");
    let deadline = Instant::now() + Duration::from_secs(10);
    while q.keyword_search(&key, "orchard", 5)["results"]
        .as_array()
        .is_none_or(Vec::is_empty)
    {
        assert!(Instant::now() < deadline, "{}", q.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}
