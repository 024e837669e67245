//! A full disk during a sync, on a file system of the test's own (a tmpfs of 16 MiB mounted on
//! the data folder): the sync stops and says the disk is full, nothing is lost, and once space
//! is freed the sync resumes by itself and every document is searchable. The database passes
//! `PRAGMA integrity_check` and the index opens. Needs root to mount (CI runs as root).

use std::path::{Path, PathBuf};
use std::process::Command;

use quarry_tests::quarry::{Quarry, running_as_root};
use quarry_tests::rng::Rng;

/// A tmpfs mounted on a folder for the test's length.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path, size: &str) -> SmallDisk {
        std::fs::create_dir_all(dir).expect("mkdir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
            .arg("tmpfs")
            .arg(dir)
            .status()
            .expect("mount runs");
        assert!(mounted.success(), "mount a tmpfs on {}", dir.display());
        SmallDisk(dir.to_owned())
    }

    fn resize(&self, size: &str) {
        let resized = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .expect("mount runs");
        assert!(resized.success(), "remount {}", self.0.display());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_sync_that_fills_the_disk_stops_saying_so_loses_nothing_and_resumes_when_space_returns() {
    if !running_as_root() {
        eprintln!("skipped: mounting a small file system needs root (CI runs as root)");
        return;
    }
    let mut q = Quarry::new();
    q.without_model();
    // About 9 MiB of text in 300 files, each with a word of its own: its index does not fit
    // beside the reserve on 16 MiB.
    let source = q.scratch("source");
    let mut rng = Rng(7);
    let words: Vec<String> = (0..20_000)
        .map(|_| {
            (0..3 + rng.below(7))
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect()
        })
        .collect();
    for i in 0..300 {
        let mut text = format!("marker{i}q ");
        for _ in 0..4_000 {
            let word: &String = rng.pick(&words);
            text.push_str(word);
            text.push(' ');
        }
        std::fs::write(source.join(format!("f{i}.txt")), text).expect("write");
    }
    let disk = SmallDisk::mount(q.data_dir(), "16m");
    q.add_folder("Source", &source);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.start();
    q.wait_for("the sync stopped by the full disk", |connectors| {
        connectors.iter().all(|c| {
            c["status"] == "error"
                && c["last_error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("disk full"))
        })
    });
    // Searches go on meanwhile; integrations are told in words of their own.
    let listed = q.request("GET", "/api/v1/connectors", Some(&key), None);
    assert_eq!(listed.status, 200, "{}", listed.text());
    assert!(
        listed.text().contains("the disk is full"),
        "{}",
        listed.text()
    );
    assert_eq!(
        q.search(&key, serde_json::json!({"query": "marker1q"}))
            .status,
        200
    );
    disk.resize("96m");
    q.wait_synced();
    for i in [0, 149, 299] {
        let found = q.keyword_search(&key, &format!("marker{i}q"), 5);
        assert_eq!(
            quarry_tests::quarry::result_paths(&found),
            [format!("f{i}.txt")],
            "{found}"
        );
    }
    let connectors = q.connectors();
    assert_eq!(connectors[0]["doc_count"], 300, "{connectors:?}");
    assert!(
        q.log().contains("has room again: syncs resume"),
        "{}",
        q.log()
    );
    q.stop();
    // The database and the index are whole.
    let database = q.database();
    let check: String = database
        .block_on(sqlx::query_scalar("PRAGMA integrity_check").fetch_one(database.pool()))
        .expect("checks");
    assert_eq!(check, "ok");
    let index = quarry_index::SearchIndex::open(&q.data_dir().join("index"), false)
        .expect("the index opens");
    assert!(!index.is_writable());
}
