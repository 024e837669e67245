//! The team's index log against a real PostgreSQL server (a database of its own per test).

use std::collections::BTreeMap;
use std::time::Duration;

use quarry_core::team_log::{LogChange, LogEntry};
use quarry_core::{ConnectorId, DocId, DocMeta};
use quarry_store::{
    CatalogDoc, CommitBatch, ConnectorGrant, NewConnector, Store, StoreError, SyncProgress,
};
use quarry_tests::postgres as pg;

/// A team store on a new database; the folder keeps its keys.
async fn team() -> (Store, tempfile::TempDir) {
    let (store, dir, _) = team_at().await;
    (store, dir)
}

/// The same, with the database's address, for another host to open it.
async fn team_at() -> (Store, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = pg::shared().new_database();
    let store = Store::open_postgres(&url, &dir.path().join("keys"))
        .await
        .expect("the team database opens");
    (store, dir, url)
}

fn connector(id: &str) -> ConnectorId {
    ConnectorId::parse(id).expect("connector id")
}

fn doc(id: &str) -> DocId {
    DocId::parse(id).expect("doc id")
}

fn put(c: &str, d: &str, record: &str) -> LogChange {
    LogChange::Put {
        connector: connector(c),
        doc: doc(d),
        record: record.as_bytes().to_vec(),
        over: None,
    }
}

/// Each entry as (doc, record) in the log's order.
fn shown(entries: &[LogEntry]) -> Vec<(String, Option<String>)> {
    entries
        .iter()
        .map(|e| {
            (
                e.doc.to_string(),
                e.record
                    .as_ref()
                    .map(|r| String::from_utf8_lossy(r).into_owned()),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_document_s_latest_change_is_read_back_in_commit_order_after_any_position() {
    let (store, _dir) = team().await;
    assert_eq!(store.team_index_end().await.expect("end"), 0);
    let first = store
        .append_to_team_index(vec![put("cn_a", "a", "alpha"), put("cn_a", "b", "beta")])
        .await
        .expect("append");
    let second = store
        .append_to_team_index(vec![
            LogChange::Delete {
                connector: connector("cn_a"),
                doc: doc("a"),
            },
            put("cn_a", "c", "gamma"),
        ])
        .await
        .expect("append");
    assert!(second > first, "{first} then {second}");
    assert_eq!(store.team_index_end().await.expect("end"), second);
    let all = store.team_index_after(0, u64::MAX).await.expect("read");
    assert_eq!(
        shown(&all),
        [
            ("b".into(), Some("beta".into())),
            ("a".into(), None),
            ("c".into(), Some("gamma".into())),
        ]
    );
    assert!(all.windows(2).all(|w| w[0].position < w[1].position));
    let after_first = store.team_index_after(first, u64::MAX).await.expect("read");
    assert_eq!(
        shown(&after_first),
        [("a".into(), None), ("c".into(), Some("gamma".into()))]
    );
    assert!(
        store
            .team_index_after(second, u64::MAX)
            .await
            .expect("read")
            .is_empty()
    );
    // Removing what is already removed changes nothing, and says so.
    let none = store
        .append_to_team_index(vec![LogChange::Delete {
            connector: connector("cn_a"),
            doc: doc("a"),
        }])
        .await
        .expect("append");
    assert_eq!(none, 0);
}

#[tokio::test]
async fn a_change_over_a_version_lands_only_over_that_version() {
    let (store, _dir) = team().await;
    let read_at = store
        .append_to_team_index(vec![put("cn_a", "a", "v1")])
        .await
        .expect("append");
    let rewritten = store
        .append_to_team_index(vec![put("cn_a", "a", "v2")])
        .await
        .expect("append");
    let over = |position: u64, record: &str| LogChange::Put {
        connector: connector("cn_a"),
        doc: doc("a"),
        record: record.as_bytes().to_vec(),
        over: Some(position),
    };
    // Vectors computed from v1 are not stored over v2.
    let stale = store
        .append_to_team_index(vec![over(read_at, "v1 with vectors")])
        .await
        .expect("append");
    assert_eq!(stale, 0);
    let landed = store
        .append_to_team_index(vec![over(rewritten, "v2 with vectors")])
        .await
        .expect("append");
    assert!(landed > rewritten);
    let all = store.team_index_after(0, u64::MAX).await.expect("read");
    assert_eq!(shown(&all), [("a".into(), Some("v2 with vectors".into()))]);
}

#[tokio::test]
async fn purging_a_connector_removes_each_of_its_documents_once() {
    let (store, _dir) = team().await;
    store
        .append_to_team_index(vec![
            put("cn_a", "1", "one"),
            put("cn_a", "2", "two"),
            put("cn_b", "1", "other"),
            put("cn_a", "3", "three"),
        ])
        .await
        .expect("append");
    let before = store.team_index_end().await.expect("end");
    let purge = || LogChange::Purge {
        connector: connector("cn_a"),
    };
    let purged = store
        .append_to_team_index(vec![purge()])
        .await
        .expect("purge");
    assert_eq!(purged, before + 3);
    let after = store
        .team_index_after(before, u64::MAX)
        .await
        .expect("read");
    assert_eq!(after.len(), 3);
    assert!(
        after
            .iter()
            .all(|e| e.record.is_none() && e.connector == connector("cn_a"))
    );
    assert_eq!(
        store
            .append_to_team_index(vec![purge()])
            .await
            .expect("purge"),
        0
    );
}

#[tokio::test]
async fn a_read_stops_at_its_byte_bound_and_always_takes_one_change() {
    let (store, _dir) = team().await;
    let big = "x".repeat(1_000);
    let changes = (0..5)
        .map(|n| put("cn_a", &format!("d{n}"), &big))
        .collect();
    store.append_to_team_index(changes).await.expect("append");
    assert_eq!(
        store.team_index_after(0, 2_500).await.expect("read").len(),
        2
    );
    assert_eq!(store.team_index_after(0, 10).await.expect("read").len(), 1);
    assert_eq!(
        store.team_index_after(0, 5_000).await.expect("read").len(),
        5
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_reading_while_hosts_append_at_once_misses_no_change() {
    let (store, _dir) = team().await;
    const WRITERS: usize = 8;
    const EACH: usize = 40;
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for n in 0..EACH {
                    store
                        .append_to_team_index(vec![put("cn_a", &format!("w{w}-{n}"), "r")])
                        .await
                        .expect("append");
                }
            })
        })
        .collect();
    // A follower reads on after the last position it saw, as a host does, while they write.
    let mut seen = BTreeMap::new();
    let mut position = 0;
    while seen.len() < WRITERS * EACH {
        let entries = store
            .team_index_after(position, u64::MAX)
            .await
            .expect("read");
        for entry in entries {
            assert!(entry.position > position);
            position = entry.position;
            seen.insert(entry.doc.to_string(), entry.position);
        }
        tokio::task::yield_now().await;
        if writers.iter().all(|w| w.is_finished()) {
            let rest = store
                .team_index_after(position, u64::MAX)
                .await
                .expect("read");
            for entry in rest {
                seen.insert(entry.doc.to_string(), entry.position);
            }
            break;
        }
    }
    for writer in writers {
        writer.await.expect("a writer");
    }
    assert_eq!(seen.len(), WRITERS * EACH, "a change was skipped");
}

#[tokio::test]
async fn a_commit_to_the_log_wakes_every_listening_host() {
    let (store, _dir) = team().await;
    let mut changes = store.team_index_changes().await.expect("listen");
    store
        .append_to_team_index(vec![put("cn_a", "a", "alpha")])
        .await
        .expect("append");
    tokio::time::timeout(Duration::from_secs(10), changes.next())
        .await
        .expect("notified within 10 s")
        .expect("the notification");
}

#[tokio::test]
async fn a_catalog_indexed_before_the_log_existed_is_told_apart() {
    let (store, _dir) = team().await;
    let now = 1_795_359_600_000;
    let notes = store
        .add_connector(
            &NewConnector {
                name: "Notes".into(),
                plugin_id: "folder".into(),
                plugin_version: "0.1.0".into(),
                config: BTreeMap::new(),
                grant: ConnectorGrant::default(),
                secret_keys: Default::default(),
            },
            now,
        )
        .await
        .expect("a connector");
    assert!(!store.catalog_without_team_index().await.expect("asked"));
    let listed = CatalogDoc {
        doc_id: doc("a"),
        locator: "a.txt".into(),
        version: "v1".into(),
        meta: DocMeta::default(),
        has_text: true,
        error: None,
        no_text: None,
        held_back: None,
        redacted: false,
        original: quarry_store::Original::Pending,
    };
    // A document held back is in no index: alone, it says nothing.
    let held = CatalogDoc {
        doc_id: doc("held"),
        locator: "held.env".into(),
        held_back: Some("an API key".into()),
        ..listed.clone()
    };
    let commit = |doc: CatalogDoc| {
        let (store, id) = (&store, &notes.id);
        async move {
            let batch = CommitBatch {
                generation: 1,
                changed: vec![doc],
                progress: SyncProgress::default(),
                ..CommitBatch::default()
            };
            store.commit_batch(id, &batch, now).await.expect("commit");
        }
    };
    commit(held).await;
    assert!(!store.catalog_without_team_index().await.expect("asked"));
    commit(listed).await;
    // Listed, but in no host's copy: the team's sources must be indexed again.
    assert!(store.catalog_without_team_index().await.expect("asked"));
    store
        .append_to_team_index(vec![put(notes.id.as_str(), "a", "alpha")])
        .await
        .expect("append");
    assert!(!store.catalog_without_team_index().await.expect("asked"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connector_claims_stay_within_the_pool_and_end_for_every_host_when_dropped() {
    let (first, dir, url) = team_at().await;
    let database = url.rsplit('/').next().expect("a name").to_owned();
    let open = || -> usize {
        pg::shared()
            .psql(
                &database,
                &format!(
                    "SELECT count(*) FROM pg_stat_activity
                      WHERE datname = '{database}' AND application_name = 'quarry'"
                ),
            )
            .parse()
            .expect("a count")
    };
    let mut held = Vec::new();
    for n in 0..16 {
        let claim = first
            .claim_connector(&connector(&format!("cn_c{n}")))
            .await
            .expect("claimed");
        held.push(claim.expect("free"));
    }
    // Sixteen syncs at once hold the pool's sixteen connections: a seventeenth waits for one
    // (3 s) and fails, and no seventeenth connection is opened.
    assert!(first.claim_connector(&connector("cn_c16")).await.is_err());
    assert!(open() <= 16, "{} connections", open());
    // Another host of the team finds a claimed connector taken...
    let second = Store::open_postgres(&url, &dir.path().join("keys"))
        .await
        .expect("the second host opens");
    let taken = second
        .claim_connector(&connector("cn_c0"))
        .await
        .expect("asked");
    assert!(taken.is_none());
    // ...and free once the claim ends (its connection closes, never back in the pool locked).
    held.remove(0);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if second
            .claim_connector(&connector("cn_c0"))
            .await
            .expect("asked")
            .is_some()
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the claim never ended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The first host's own pool gets its connection back for other work.
    assert!(
        first
            .claim_connector(&connector("cn_c17"))
            .await
            .expect("asked")
            .is_some()
    );
}

#[tokio::test]
async fn a_data_folder_has_no_team_index_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("quarry.db"), &dir.path().join("keys"))
        .await
        .expect("open");
    let refused = store.team_index_end().await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
}
