//! Syncs through the real folder component into a real store and index.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quarry_core::{ConnectorId, DocId, DocMeta};
use quarry_index::{DocInfo, Hit, IndexDoc, SearchIndex, SearchRequest, WriteBatch};
use quarry_runtime::{Grant, Limits, PluginSet, Runtime, RuntimeConfig};
use quarry_store::{
    CatalogDoc, ConnectorGrant, ConnectorStatus, Fingerprint, NewConnector, Store, now_ms,
};
use quarry_sync::{
    REFUSED_CHANGED, REFUSED_PENDING, REFUSED_TOO_LARGE, Scheduler, Serving, SyncError, SyncReport,
    Syncer, served_bytes,
};

struct World {
    _dir: tempfile::TempDir,
    folder: std::path::PathBuf,
    rt: tokio::runtime::Runtime,
    store: Store,
    index: Arc<SearchIndex>,
    syncer: Syncer,
    plugins: PluginSet,
    connector: ConnectorId,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("folder");
    fs::create_dir_all(&folder).expect("mkdir");
    // The data folder beside the granted one, as in real use (a folder inside a data folder is
    // never granted).
    let data = dir.path().join("data");
    fs::create_dir_all(&data).expect("mkdir");
    let rt = tokio::runtime::Runtime::new().expect("tokio");
    let store = rt
        .block_on(Store::open(
            &data.join("quarry.db"),
            &dir.path().join("keys"),
        ))
        .expect("store");
    let index = Arc::new(SearchIndex::open(&data.join("index"), true).expect("index"));
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(quarry_tests::component_cache()),
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let (plugins, failed) =
        PluginSet::load(&runtime, &[quarry_tests::plugins_dir()], &Limits::default());
    assert!(failed.is_empty(), "{failed:?}");
    let path = folder.to_string_lossy().into_owned();
    let connector = rt
        .block_on(store.add_connector(
            &NewConnector {
                name: "Notes".into(),
                plugin_id: "folder".into(),
                plugin_version: "0.1.0".into(),
                config: BTreeMap::from([("folder".to_owned(), path.clone())]),
                grant: ConnectorGrant {
                    dirs: BTreeMap::from([("folder".to_owned(), path)]),
                    hosts: Vec::new(),
                },
                secret_keys: Default::default(),
            },
            now_ms(),
        ))
        .expect("connector")
        .id;
    let syncer = Syncer::new(
        store.clone(),
        index.clone(),
        plugins.clone(),
        rt.handle().clone(),
    );
    World {
        _dir: dir,
        folder,
        rt,
        store,
        index,
        syncer,
        plugins,
        connector,
    }
}

impl World {
    /// The connector as the store has it now.
    fn connector(&self) -> quarry_store::Connector {
        self.rt
            .block_on(self.store.connector(&self.connector))
            .expect("store")
            .expect("exists")
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.folder.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }

    fn sync(&self) -> SyncReport {
        self.syncer
            .sync(&self.connector, &AtomicBool::new(false))
            .expect("sync succeeds")
    }

    /// Paths of the documents the index finds for `query`.
    fn found(&self, query: &str) -> BTreeSet<String> {
        self.hits(query)
            .into_iter()
            .filter_map(|h| h.info.meta.path)
            .collect()
    }

    /// The id of the document at `path`, found with `query`.
    fn id_of(&self, query: &str, path: &str) -> DocId {
        self.hits(query)
            .into_iter()
            .find(|h| h.info.meta.path.as_deref() == Some(path))
            .map(|h| h.info.doc_id)
            .unwrap_or_else(|| panic!("{path} found by {query}"))
    }

    fn hits(&self, query: &str) -> Vec<Hit> {
        self.index
            .search(&SearchRequest::new(
                query,
                vec![self.connector.clone()],
                100,
            ))
            .expect("search")
            .hits
    }

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| (*p).to_owned()).collect()
    }
}

#[test]
fn syncs_changes_skipping_what_did_not_change() {
    let w = world();
    w.write("a.md", "alpha shared");
    w.write("b.txt", "bravo shared");
    w.write("sub/c.txt", "charlie shared");
    let first = w.sync();
    assert_eq!(
        (first.listed, first.indexed, first.failed, first.deleted),
        (3, 3, 0, 0)
    );
    assert_eq!(
        w.found("shared"),
        World::set(&["a.md", "b.txt", "sub/c.txt"])
    );
    let connector = w.connector();
    assert_eq!(connector.status, ConnectorStatus::Idle);
    assert_eq!(connector.doc_count, 3);
    assert!(connector.last_sync_ms.is_some());

    let again = w.sync();
    assert_eq!(
        (again.listed, again.indexed, again.deleted),
        (3, 0, 0),
        "nothing changed"
    );

    std::thread::sleep(std::time::Duration::from_millis(20));
    w.write("b.txt", "bravo rewritten");
    fs::remove_file(w.folder.join("sub/c.txt")).expect("remove");
    w.write("d.txt", "delta shared");
    let third = w.sync();
    assert_eq!((third.listed, third.indexed, third.deleted), (3, 2, 1));
    assert_eq!(w.found("shared"), World::set(&["a.md", "d.txt"]));
    assert_eq!(w.found("rewritten"), World::set(&["b.txt"]));
    assert!(w.found("charlie").is_empty());
    let connector = w.connector();
    assert_eq!(connector.doc_count, 3);
    assert_eq!(w.index.num_docs().expect("count"), 3);
}

#[test]
fn a_thread_woken_by_a_batch_finds_the_batch_committed_in_the_store() {
    let w = world();
    w.write("a.md", "alpha");
    w.write("b.md", "bravo");
    let (store, connector, handle) = (w.store.clone(), w.connector.clone(), w.rt.handle().clone());
    // As the OCR queue does: parked until a batch is committed, then reading the store.
    let waiter = std::thread::spawn(move || {
        let started = Instant::now();
        std::thread::park_timeout(Duration::from_secs(60));
        let versions = handle
            .block_on(store.all_versions(&connector))
            .expect("store");
        (started.elapsed(), versions)
    });
    w.syncer.wake_on_batch(waiter.thread().clone());
    w.sync();
    let (waited, versions) = waiter.join().expect("the waiter ends");
    assert!(
        waited < Duration::from_secs(30),
        "woken by the batch, not by its timeout"
    );
    // Every document with its version: the batch was committed, not only prepared (versions
    // are empty until then), when the thread woke.
    assert_eq!(versions.len(), 2, "{versions:?}");
    assert!(versions.values().all(|v| !v.is_empty()), "{versions:?}");
}

#[test]
fn an_interrupted_sync_resumes_without_losing_or_redoing_documents() {
    let w = world();
    let files = 2500;
    for i in 0..files {
        w.write(
            &format!("d{}/f{i:04}.txt", i % 9),
            &format!("common word{i}"),
        );
    }
    // Stop the sync as soon as its first batch is committed.
    let stop = AtomicBool::new(false);
    let first = std::thread::scope(|scope| {
        let handle = scope.spawn(|| w.syncer.sync(&w.connector, &stop));
        while !handle.is_finished() {
            let c = w.connector();
            if c.progress.listed > 0 {
                stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        handle.join().expect("joins")
    });
    let stopped_early = matches!(first, Err(SyncError::Stopped));
    let done_first = w.connector().progress.indexed;
    let second = w.sync();
    if stopped_early {
        assert!(done_first < files, "the first sync stopped part way");
    }
    // A resumed listing goes on counting from where it stopped: the count covers both syncs.
    assert_eq!(
        second.indexed, files,
        "every document fetched exactly once across the two syncs ({done_first} by the first)"
    );
    let results = w.found("common");
    assert_eq!(w.index.num_docs().expect("count"), files);
    assert_eq!(results.len(), 100, "search limit");
    let connector = w.connector();
    assert_eq!(connector.doc_count, files);
    assert!(!connector.listing.more);
}

#[test]
fn a_broken_file_is_indexed_by_name_and_the_sync_goes_on() {
    let w = world();
    w.write("good.txt", "fine words");
    fs::write(
        w.folder.join("broken.pdf"),
        b"%PDF-1.4 this is not really a pdf",
    )
    .expect("write");
    let report = w.sync();
    assert_eq!((report.listed, report.indexed, report.failed), (2, 2, 1));
    assert_eq!(
        w.found("broken"),
        World::set(&["broken.pdf"]),
        "found by its name"
    );
    assert_eq!(w.found("fine"), World::set(&["good.txt"]));
    let id = w.id_of("broken", "broken.pdf");
    let doc =
        w.rt.block_on(w.store.catalog_doc(&w.connector, &id))
            .expect("store")
            .expect("in the catalog");
    let error = doc.error.expect("the reason is kept");
    assert!(error.contains("plugin folder: fetch-content"), "{error}");
    // Not retried while its version is the same.
    assert_eq!(w.sync().indexed, 0);
}

#[test]
fn removed_connectors_are_purged_and_missing_plugins_reported() {
    let w = world();
    w.write("a.txt", "alpha");
    w.sync();
    assert_eq!(w.index.num_docs().expect("count"), 1);
    w.rt.block_on(w.store.remove_connector("notes", now_ms()))
        .expect("remove");
    assert!(matches!(
        w.syncer.sync(&w.connector, &AtomicBool::new(false)),
        Err(SyncError::Gone)
    ));
    w.syncer.purge(&w.connector).expect("purge");
    assert_eq!(w.index.num_docs().expect("count"), 0);
    assert!(
        w.rt.block_on(w.store.removed_connectors())
            .expect("store")
            .is_empty()
    );

    let other =
        w.rt.block_on(w.store.add_connector(
            &NewConnector {
                name: "Feed".into(),
                plugin_id: "rss".into(),
                plugin_version: "1.0.0".into(),
                config: BTreeMap::new(),
                grant: ConnectorGrant::default(),
                secret_keys: Default::default(),
            },
            now_ms(),
        ))
        .expect("connector");
    let err = w
        .syncer
        .sync(&other.id, &AtomicBool::new(false))
        .expect_err("no such plugin");
    assert_eq!(
        err.to_string(),
        "plugin \"rss\" is not installed; install it or remove the connector"
    );
    let feed =
        w.rt.block_on(w.store.connector(&other.id))
            .expect("store")
            .expect("exists");
    assert_eq!(feed.status, ConnectorStatus::Error);
    assert_eq!(feed.last_error.as_deref(), Some(err.to_string().as_str()));
}

/// What a sync killed between writing the index and committing the catalog leaves behind: the
/// batch prepared in the catalog and written to the index, nothing more.
fn cut_short(w: &World, doc_id: &DocId, path: &str, text: &str) {
    let meta = DocMeta {
        title: path.to_owned(),
        path: Some(path.to_owned()),
        url: None,
        mime_type: "text/plain".into(),
        size_bytes: text.len() as u64,
        update_time_ms: now_ms(),
    };
    let prepared = CatalogDoc {
        doc_id: doc_id.clone(),
        locator: path.to_owned(),
        version: String::new(),
        meta: meta.clone(),
        has_text: true,
        error: None,
        no_text: None,
        held_back: None,
        redacted: false,
        original: quarry_store::Original::Pending,
    };
    w.rt.block_on(
        w.store
            .prepare_batch(&w.connector, &[prepared], &[], now_ms()),
    )
    .expect("prepare");
    w.index
        .write(WriteBatch {
            upserts: vec![IndexDoc {
                info: DocInfo {
                    connector: w.connector.clone(),
                    doc_id: doc_id.clone(),
                    meta,
                },
                text: text.to_owned(),
                page_starts: Vec::new(),
                metadata: Vec::new(),
                embedding: None,
            }],
            ..WriteBatch::default()
        })
        .expect("index write");
}

#[test]
fn a_batch_cut_short_leaves_no_stale_document_once_synced_again() {
    let w = world();
    w.write("a.txt", "alpha");
    w.sync();
    let a = w.id_of("alpha", "a.txt");

    // A new document written to the index whose file is gone by the next sync: the catalog
    // knew of it before the index did, so the next full listing removes it.
    let gone = DocId::parse("f_written_then_deleted").expect("id");
    cut_short(&w, &gone, "b.txt", "bravo");
    assert_eq!(w.found("bravo"), World::set(&["b.txt"]));
    // A known document whose new text reached the index but not the catalog, and whose file
    // then went back to the version the catalog has: it is fetched again, not trusted.
    cut_short(&w, &a, "a.txt", "bogus");
    assert!(w.found("alpha").is_empty());

    let report = w.sync();
    assert!(
        w.found("bravo").is_empty(),
        "the unlisted document is removed"
    );
    assert_eq!(
        w.found("alpha"),
        World::set(&["a.txt"]),
        "the source's text"
    );
    assert!(w.found("bogus").is_empty());
    assert_eq!(report.deleted, 1);
    let connector = w.connector();
    assert_eq!(connector.doc_count, 1);
    assert_eq!(w.index.num_docs().expect("count"), 1);
}

#[test]
fn a_full_listing_reports_what_remains_and_when_it_completed() {
    let w = world();
    for i in 0..2500 {
        w.write(&format!("f{i:04}.txt"), &format!("word{i}"));
    }
    w.sync();
    let first = w.connector();
    let completed = first
        .listing
        .last_full_ms
        .expect("the first listing was full");
    assert_eq!(first.progress.remaining, None, "no sync runs");

    // Stop the second sync after its first batch: a full listing is half-way, with a known size.
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let handle = scope.spawn(|| w.syncer.sync(&w.connector, &stop));
        loop {
            let c = w.connector();
            if c.progress.listed > 0 && c.status == ConnectorStatus::Syncing {
                let remaining = c.progress.remaining.expect("known from the last listing");
                assert_eq!(remaining, 2500 - c.progress.listed);
                assert!(remaining > 0, "stopped half-way");
                stop.store(true, Ordering::Relaxed);
                break;
            }
            if handle.is_finished() {
                break;
            }
        }
        let _ = handle.join().expect("joins");
    });
    w.sync();
    let after = w.connector();
    assert!(after.listing.last_full_ms.expect("completed") >= completed);
    assert_eq!(after.doc_count, 2500);
}

#[test]
fn a_clock_that_went_back_does_not_hold_a_connectors_syncs_until_it_catches_up() {
    let w = world();
    w.write("a.txt", "alpha");
    w.sync();
    // The last sync as a clock that has since gone back two days would have written it.
    let future = now_ms() + 2 * 86_400_000;
    w.rt.block_on(w.store.sync_finished(&w.connector, None, future))
        .expect("store");
    let syncer = Arc::new(Syncer::new(
        w.store.clone(),
        w.index.clone(),
        w.syncer.plugins().clone(),
        w.rt.handle().clone(),
    ));
    let scheduler = Scheduler::new(syncer, 1);
    w.rt.block_on(scheduler.tick()).expect("tick");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while w.connector().last_sync_ms == Some(future) {
        assert!(
            std::time::Instant::now() < deadline,
            "no sync while the last one looks two days ahead"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(w.connector().last_sync_ms.is_some_and(|t| t < future));
}

#[test]
fn a_file_is_read_whole_for_a_preview_only_within_its_bound_and_only_as_judged() {
    let w = world();
    let text = "harbour ".repeat(200);
    w.write("long.txt", &text);
    w.sync();
    let id = w.id_of("harbour", "long.txt");
    let connector = w.connector();
    let doc =
        w.rt.block_on(w.store.catalog_doc(&w.connector, &id))
            .expect("store")
            .expect("catalogued");
    let plugin = w.plugins.get("folder").expect("the folder plugin");
    let grant = Grant::from_stored(&connector.grant.dirs, &connector.grant.hosts);
    let mut session = plugin
        .session(&connector.config, &grant, None)
        .expect("a session");
    let file = (&id, doc.locator.as_str());
    let whole = served_bytes(&mut session, file, &Serving::AsItIs, 1 << 20).expect("read whole");
    assert_eq!(whole, text.as_bytes());
    let (why, _) = served_bytes(&mut session, file, &Serving::AsItIs, 1000)
        .expect_err("1,600 bytes are over a bound of 1,000");
    assert_eq!(why, REFUSED_TOO_LARGE);
    let (why, _) = served_bytes(
        &mut session,
        file,
        &Serving::Refused(REFUSED_PENDING),
        1 << 20,
    )
    .expect_err("a file not served is not read");
    assert_eq!(why, REFUSED_PENDING);
    // Changed since it was judged: the bytes read are not the ones judged.
    let judged = Fingerprint {
        size: text.len() as u64,
        sha256: [0; 32],
    };
    let (why, _) = served_bytes(&mut session, file, &Serving::IfUnchanged(judged), 1 << 20)
        .expect_err("not the file judged");
    assert_eq!(why, REFUSED_CHANGED);
}
