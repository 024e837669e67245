//! Crash safety: the real server is killed (SIGKILL) at random points of its syncs, the folder
//! changes while it is down, and after a last restart the index must hold exactly the folder's
//! files, each once, with its current text. Checked document by document through the API. (A
//! crash with vectors pending: `api_semantic.rs`.)

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use quarry_tests::generated::english;
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::Value;

/// Files in the folder at the start: enough that the first sync outlasts most of the kills.
const FILES: u32 = 10_000;

/// Kills before the last start.
const KILLS: usize = 6;

/// The folder as the test knows it: relative path -> the file's id and version. Each file holds
/// the word `crashcorpus` and a marker `m<id>v<version>` found in no other file.
struct Folder {
    root: std::path::PathBuf,
    files: BTreeMap<String, (u32, u32)>,
    next_id: u32,
    /// Text after the marker.
    filler: String,
}

impl Folder {
    fn write(&mut self, rel: &str, id: u32, version: u32) {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let text = format!(
            "crashcorpus m{id}v{version}\n\nA note of the crash test, number {id}, edited {version} times.\n\n{}",
            self.filler
        );
        fs::write(&path, text).expect("write");
        self.files.insert(rel.to_owned(), (id, version));
    }

    fn create(&mut self, rng: &mut Rng) {
        let id = self.next_id;
        self.next_id += 1;
        let rel = format!("d{:02}/n{id:05}.md", rng.below(25));
        self.write(&rel, id, 0);
    }

    fn pick(&self, rng: &mut Rng) -> String {
        let paths: Vec<&String> = self.files.keys().collect();
        (*rng.pick(&paths)).clone()
    }

    /// Edits, deletes, creates and moves some files, as a user would while Quarry is down.
    fn change(&mut self, rng: &mut Rng) {
        for _ in 0..20 {
            let rel = self.pick(rng);
            let (id, version) = self.files[&rel];
            self.write(&rel, id, version + 1);
        }
        for _ in 0..10 {
            let rel = self.pick(rng);
            fs::remove_file(self.root.join(&rel)).expect("rm");
            self.files.remove(&rel);
        }
        for _ in 0..10 {
            self.create(rng);
        }
        for _ in 0..10 {
            let rel = self.pick(rng);
            let entry = self.files.remove(&rel).expect("known");
            let to = format!("d{:02}/moved-{}.md", rng.below(25), entry.0);
            fs::rename(self.root.join(&rel), self.root.join(&to)).expect("move");
            self.files.insert(to, entry);
        }
    }
}

/// This test checks every document with a search of its own, as fast as the server answers:
/// far above the request rate an integration may keep up by default.
const BULK_CHECKER: &[(&str, &str)] = &[("QUARRY_RATE_LIMIT", "100000")];

fn last_sync(q: &Quarry) -> Value {
    q.connectors()[0]["last_sync_time"].clone()
}

#[test]
fn a_server_killed_mid_sync_converges_to_the_folder() {
    let mut q = Quarry::new();
    let mut rng = Rng(0x5eed_c0de);
    let mut folder = Folder {
        root: q.scratch("source"),
        files: BTreeMap::new(),
        next_id: 0,
        filler: english(&mut rng, 20),
    };
    for _ in 0..FILES {
        folder.create(&mut rng);
    }
    q.add_folder("Source", &folder.root);
    let key = q.integration("Checker", "all", &["--quota", "unlimited"]);
    // Keyword only: the syncs are the work under test. Each kill lands at a random point of a
    // sync the start began (a batch reaches the index before the catalog commits it).
    q.without_model();

    let mut killed_mid_sync = 0;
    for round in 0..KILLS {
        let before = last_sync(&q);
        q.start_with_env(BULK_CHECKER);
        q.wait_for("a sync to start", |c| {
            c[0]["status"] == "syncing" || c[0]["last_sync_time"] != before
        });
        std::thread::sleep(Duration::from_millis(rng.below(800) as u64));
        q.kill();
        let c = q.connectors().remove(0);
        if c["status"] == "syncing" {
            killed_mid_sync += 1;
        }
        println!(
            "round {round}: killed while {} ({} listed, {} documents)",
            c["status"], c["progress"]["listed"], c["doc_count"]
        );
        folder.change(&mut rng);
    }
    assert!(
        killed_mid_sync >= KILLS / 2,
        "only {killed_mid_sync} of {KILLS} kills hit a running sync: the syncs got faster, give the test more work"
    );

    let before = last_sync(&q);
    q.start_with_env(BULK_CHECKER);
    q.wait_for("a sync after the last start", |c| {
        c[0]["status"] == "idle" && c[0]["last_sync_time"] != before
    });
    check(&q, &key, &folder);
}

/// The index holds each file of the folder exactly once, at its path, with its current text, and
/// nothing else.
fn check(q: &Quarry, key: &str, folder: &Folder) {
    let total = q.keyword_search(key, "crashcorpus", 5)["total"]
        .as_u64()
        .expect("total");
    assert_eq!(
        total,
        folder.files.len() as u64,
        "documents in the index vs files in the folder"
    );
    let c = q.connectors().remove(0);
    assert_eq!(c["doc_count"], folder.files.len(), "catalog count: {c}");
    assert!(c["last_error"].is_null(), "{c}");
    for (rel, (id, version)) in &folder.files {
        let found = q.keyword_search(key, &format!("m{id}v{version}"), 5);
        assert_eq!(found["total"], 1, "{rel} (m{id}v{version}): {found}");
        assert_eq!(found["results"][0]["path"], rel.as_str(), "{found}");
        if *version > 0 {
            let stale = q.keyword_search(key, &format!("m{id}v{}", version - 1), 5);
            assert_eq!(stale["total"], 0, "{rel}: an old version is still indexed");
        }
    }
    assert!(Path::new(&folder.root).is_dir());
}
