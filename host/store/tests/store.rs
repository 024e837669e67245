//! The store against real SQLite files in temporary folders, and the same tests against a real
//! PostgreSQL server (a database of its own per test): `sqlite::*` and `postgres::*`.

use std::collections::{BTreeMap, BTreeSet};

use quarry_core::{DocId, DocMeta};
use quarry_store::{
    AuditEntry, AuditFilter, CatalogDoc, CommitBatch, ConnectorGrant, ConnectorStatus,
    CredentialMode, NewConnector, Quota, Sharing, Store, StoreError, SyncFailure, SyncProgress,
    UsageMonth,
};
use quarry_tests::postgres as pg;

const NOW: i64 = 1_795_359_600_000; // 2026-11-22T15:00:00Z

/// Which database a test runs on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sqlite,
    Postgres,
}

/// Where a test's store lives: a data folder (with its keys folder), and for PostgreSQL a new
/// database on the test binary's server.
struct Place {
    dir: tempfile::TempDir,
    url: Option<String>,
}

impl Place {
    fn new(kind: Kind) -> Place {
        Place {
            dir: tempfile::tempdir().expect("tempdir"),
            url: (kind == Kind::Postgres).then(|| pg::shared().new_database()),
        }
    }

    fn keys(&self) -> std::path::PathBuf {
        self.dir.path().join("keys")
    }

    async fn try_open(&self) -> Result<Store, StoreError> {
        match &self.url {
            None => Store::open(&self.dir.path().join("quarry.db"), &self.keys()).await,
            Some(url) => Store::open_postgres(url, &self.keys()).await,
        }
    }

    async fn open(&self) -> Store {
        self.try_open().await.expect("store opens")
    }

    /// Everything the database holds, as stored: the SQLite files' bytes, or PostgreSQL's
    /// dump of the database.
    fn raw_contents(&self) -> String {
        match &self.url {
            None => {
                let mut bytes = Vec::new();
                for entry in std::fs::read_dir(self.dir.path()).expect("list") {
                    let path = entry.expect("entry").path();
                    if path
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("quarry.db"))
                    {
                        bytes.extend(std::fs::read(&path).expect("read"));
                    }
                }
                String::from_utf8_lossy(&bytes).into_owned()
            }
            Some(url) => {
                let out = std::process::Command::new(pg::bin("pg_dump"))
                    .args(["--data-only", "--inserts", "-d", url])
                    .output()
                    .expect("pg_dump runs");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                String::from_utf8_lossy(&out.stdout).into_owned()
            }
        }
    }
}

/// Each named test, as `sqlite::NAME` and `postgres::NAME`.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test]
            async fn $name() -> Result<(), super::StoreError> {
                super::$name(super::Kind::Sqlite).await
            })*
        }
        mod postgres {
            $(#[tokio::test]
            async fn $name() -> Result<(), super::StoreError> {
                super::$name(super::Kind::Postgres).await
            })*
        }
    };
}

fn folder(name: &str) -> NewConnector {
    NewConnector {
        name: name.to_owned(),
        plugin_id: "folder".to_owned(),
        plugin_version: "0.1.0".to_owned(),
        config: BTreeMap::from([("folder".to_owned(), "/data/notes".to_owned())]),
        grant: ConnectorGrant {
            dirs: BTreeMap::from([("folder".to_owned(), "/data/notes".to_owned())]),
            hosts: Vec::new(),
        },
        secret_keys: BTreeSet::new(),
    }
}

fn doc(id: &str, version: &str) -> CatalogDoc {
    CatalogDoc {
        doc_id: DocId::parse(id).expect("valid id"),
        locator: format!("{id}.txt"),
        version: version.to_owned(),
        meta: DocMeta {
            title: format!("{id}.txt"),
            path: Some(format!("{id}.txt")),
            url: None,
            mime_type: "text/plain".to_owned(),
            size_bytes: 10,
            update_time_ms: NOW,
        },
        has_text: true,
        error: None,
        no_text: None,
        held_back: None,
        redacted: false,
        original: quarry_store::Original::Pending,
    }
}

async fn keys_authenticate_until_rotated_revoked_or_expired(kind: Kind) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let (integration, key) = store
        .create_integration("Claude Desktop", &Sharing::All, Quota::FREE, None, NOW)
        .await?;
    assert_eq!(integration.plan, "free");
    assert_eq!(integration.quota, Quota::Limited(10_000));
    let (found, lookup) = store
        .authenticate(key.expose(), NOW)
        .await?
        .expect("the new key works");
    assert_eq!(found, integration);
    assert!(key.expose().contains(&lookup));

    // Names are unique without regard to case.
    let err = store
        .create_integration("claude desktop", &Sharing::All, Quota::FREE, None, NOW)
        .await
        .expect_err("duplicate name");
    assert!(matches!(err, StoreError::NameTaken { .. }), "{err}");

    // Nothing about the key is stored in clear beyond its lookup prefix.
    let stored = place.raw_contents();
    assert!(stored.contains(&lookup), "the test reads what is stored");
    assert!(!stored.contains(&key.expose()[4 + 16..]));

    let rotated = store.rotate_key("CLAUDE DESKTOP", None, NOW + 1).await?;
    assert!(
        store.authenticate(key.expose(), NOW + 2).await?.is_none(),
        "old key revoked"
    );
    assert!(
        store
            .authenticate(rotated.expose(), NOW + 2)
            .await?
            .is_some()
    );

    assert_eq!(store.revoke_keys("Claude Desktop", NOW + 3).await?, 1);
    assert!(
        store
            .authenticate(rotated.expose(), NOW + 4)
            .await?
            .is_none()
    );

    let (_, expiring) = store
        .create_integration(
            "Short lived",
            &Sharing::All,
            Quota::FREE,
            Some(NOW + 1000),
            NOW,
        )
        .await?;
    assert!(
        store
            .authenticate(expiring.expose(), NOW + 999)
            .await?
            .is_some()
    );
    assert!(
        store
            .authenticate(expiring.expose(), NOW + 1000)
            .await?
            .is_none()
    );

    for bad in ["", "qry_nope", "Bearer", &key.expose().to_uppercase()] {
        assert!(store.authenticate(bad, NOW).await?.is_none(), "{bad}");
    }
    Ok(())
}

async fn usage_counts_atomically_per_utc_month_and_survives_reopening(
    kind: Kind,
) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let (integration, _) = store
        .create_integration("Busy", &Sharing::All, Quota::Limited(5), None, NOW)
        .await?;
    let mut tasks = Vec::new();
    for _ in 0..200 {
        let store = store.clone();
        let id = integration.id.clone();
        tasks.push(tokio::spawn(
            async move { store.count_request(&id, NOW).await },
        ));
    }
    let mut counts = Vec::new();
    for task in tasks {
        counts.push(task.await.expect("task runs")?.0);
    }
    counts.sort_unstable();
    assert_eq!(
        counts,
        (1..=200).collect::<Vec<u64>>(),
        "each request got its own count"
    );
    store.close().await;

    let store = place.open().await;
    let (count, month) = store.count_request(&integration.id, NOW).await?;
    assert_eq!(count, 201, "counts survive reopening");
    assert_eq!(month, UsageMonth::at(NOW));
    let next_month = UsageMonth::at(NOW).reset_ms;
    assert_eq!(store.count_request(&integration.id, next_month).await?.0, 1);
    let summary = store.integrations(NOW).await?;
    assert_eq!(summary[0].requests_this_month, 201);
    assert_eq!(summary[0].integration.plan, "custom");
    Ok(())
}

async fn sharing_selections_follow_connectors(kind: Kind) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let notes = store.add_connector(&folder("Notes"), NOW).await?;
    let mail = store.add_connector(&folder("Mail"), NOW).await?;
    let err = store
        .add_connector(&folder("NOTES"), NOW)
        .await
        .expect_err("dup");
    assert!(matches!(err, StoreError::NameTaken { .. }), "{err}");

    let sharing = store.sharing_of(&["notes".to_owned()]).await?;
    assert_eq!(sharing, Sharing::Selected(vec![notes.id.clone()]));
    let err = store
        .sharing_of(&["Photos".to_owned()])
        .await
        .expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "no connector named \"Photos\"; known: Mail, Notes"
    );
    let (agent, _) = store
        .create_integration("Agent", &sharing, Quota::Unlimited, None, NOW)
        .await?;
    assert!(agent.sharing.allows(&notes.id) && !agent.sharing.allows(&mail.id));
    assert_eq!(agent.plan, "unlimited");

    store.remove_connector("Notes", NOW).await?;
    assert_eq!(
        store.integration("agent").await?.sharing,
        Sharing::Selected(vec![])
    );
    assert_eq!(store.removed_connectors().await?, vec![notes.id.clone()]);
    // The name is free again at once; the old connector waits for its purge.
    let again = store.add_connector(&folder("Notes"), NOW).await?;
    assert_ne!(again.id, notes.id);
    store.purge_connector(&notes.id).await?;
    assert!(store.removed_connectors().await?.is_empty());

    store.set_sharing("Agent", &Sharing::Declined).await?;
    assert_eq!(store.integration("Agent").await?.sharing, Sharing::Declined);
    Ok(())
}

async fn connectors_put_first_for_embedding_are_remembered_until_put_back(
    kind: Kind,
) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let notes = store.add_connector(&folder("Notes"), NOW).await?;
    store.add_connector(&folder("Code"), NOW).await?;
    assert!(!notes.embed_first);
    assert!(store.connectors_embedded_first().await?.is_empty());
    assert!(store.set_embed_first("notes", true).await?.embed_first);
    assert_eq!(
        store.connectors_embedded_first().await?,
        vec![notes.id.clone()]
    );
    assert!(!store.set_embed_first("Notes", false).await?.embed_first);
    assert!(store.connectors_embedded_first().await?.is_empty());
    store.set_embed_first("Notes", true).await?;
    store.remove_connector("Notes", NOW).await?;
    assert!(
        store.connectors_embedded_first().await?.is_empty(),
        "a removed connector is not first"
    );
    Ok(())
}

async fn batches_commit_documents_checkpoints_and_counts_together(
    kind: Kind,
) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let c = store.add_connector(&folder("Notes"), NOW).await?;
    assert!(
        c.schedule.sync_requested_ms.is_some(),
        "a new connector waits for its first sync"
    );
    store.sync_started(&c.id).await?;
    assert_eq!(
        store.connector(&c.id).await?.expect("exists").status,
        ConnectorStatus::Syncing
    );

    let ids = |names: &[&str]| -> Vec<DocId> {
        names
            .iter()
            .map(|n| DocId::parse(*n).expect("valid"))
            .collect()
    };
    let first = CommitBatch {
        generation: 1,
        changed: vec![doc("a", "v1"), doc("b", "v1"), doc("c", "v1")],
        checkpoint: "c".into(),
        more: true,
        progress: SyncProgress {
            listed: 3,
            indexed: 3,
            failed: 0,
            remaining: None,
        },
        ..CommitBatch::default()
    };
    store.commit_batch(&c.id, &first, NOW).await?;
    let after = store.connector(&c.id).await?.expect("exists");
    assert_eq!(
        (
            after.doc_count,
            after.listing.checkpoint.as_deref(),
            after.listing.more
        ),
        (3, Some("c"), true)
    );

    let versions = store
        .catalog_versions(&c.id, &ids(&["a", "b", "x"]))
        .await?;
    assert_eq!(versions.len(), 2);
    assert_eq!(
        versions.get(&ids(&["a"])[0]).map(String::as_str),
        Some("v1")
    );

    // The next listing sees a unchanged, b changed, c gone, d new.
    let second = CommitBatch {
        generation: 2,
        changed: vec![doc("b", "v2"), doc("d", "v1")],
        checkpoint: String::new(),
        more: false,
        progress: SyncProgress {
            listed: 3,
            indexed: 2,
            failed: 0,
            remaining: None,
        },
        ..CommitBatch::default()
    };
    store.commit_batch(&c.id, &second, NOW).await?;
    let all = store.all_versions(&c.id).await?;
    let mut listed: Vec<(&str, &str)> = all
        .iter()
        .map(|(id, v)| (id.as_str(), v.as_str()))
        .collect();
    listed.sort();
    assert_eq!(listed, [("a", "v1"), ("b", "v2"), ("c", "v1"), ("d", "v1")]);
    let unseen = ids(&["c"]);
    let sweep = CommitBatch {
        generation: 2,
        deleted: unseen,
        more: false,
        progress: SyncProgress {
            listed: 3,
            indexed: 2,
            failed: 0,
            remaining: None,
        },
        ..CommitBatch::default()
    };
    store.commit_batch(&c.id, &sweep, NOW).await?;
    let after = store.connector(&c.id).await?.expect("exists");
    assert_eq!(after.doc_count, 3);
    assert!(!after.listing.more);
    assert_eq!(after.listing.generation, 2);
    let b = store.catalog_doc(&c.id, &ids(&["b"])[0]).await?.expect("b");
    assert_eq!(b.version, "v2");
    assert!(store.catalog_doc(&c.id, &ids(&["c"])[0]).await?.is_none());

    let failure = SyncFailure {
        full: "plugin folder: list-docs timed out".to_owned(),
        public: "the connector's plugin took too long and was stopped".to_owned(),
    };
    store.sync_finished(&c.id, Some(&failure), NOW).await?;
    let after = store.connector(&c.id).await?.expect("exists");
    assert_eq!(after.status, ConnectorStatus::Error);
    assert_eq!(after.last_error.as_deref(), Some(failure.full.as_str()));
    assert_eq!(
        after.last_error_public.as_deref(),
        Some(failure.public.as_str())
    );
    store.sync_finished(&c.id, None, NOW).await?;
    assert_eq!(
        store.connector(&c.id).await?.expect("exists").status,
        ConnectorStatus::Idle
    );
    Ok(())
}

async fn audit_entries_list_newest_first_with_filters(kind: Kind) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let entry = |t: i64, who: &str, connector: Option<&str>| AuditEntry {
        time_ms: t,
        request_id: format!("r{t}"),
        integration_id: who.to_owned(),
        endpoint: "POST /api/v1/search".to_owned(),
        connector_id: connector.map(str::to_owned),
        doc_id: None,
        bytes: 100,
        status: 200,
    };
    store
        .record_audit(&[
            entry(1, "in_a", None),
            entry(2, "in_b", Some("cn_x")),
            entry(3, "in_a", Some("cn_x")),
        ])
        .await?;
    let all = store.audit(&AuditFilter::default()).await?;
    assert_eq!(all.iter().map(|e| e.time_ms).collect::<Vec<_>>(), [3, 2, 1]);
    let only_a = store
        .audit(&AuditFilter {
            integration_id: Some("in_a".into()),
            ..AuditFilter::default()
        })
        .await?;
    assert_eq!(only_a.len(), 2);
    let x_since_3 = store
        .audit(&AuditFilter {
            connector_id: Some("cn_x".into()),
            since_ms: Some(3),
            ..AuditFilter::default()
        })
        .await?;
    assert_eq!(x_since_3, vec![entry(3, "in_a", Some("cn_x"))]);
    Ok(())
}

async fn a_connectors_debug_form_shows_no_setting_values(kind: Kind) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let mut new = folder("Secrets");
    new.config
        .insert("password".to_owned(), "hunter2-secret".to_owned());
    assert!(!format!("{new:?}").contains("hunter2-secret"));
    let added = store.add_connector(&new, NOW).await.expect("added");
    assert_eq!(
        added.config.get("password").map(String::as_str),
        Some("hunter2-secret")
    );
    let shown = format!("{added:?}");
    assert!(
        !shown.contains("hunter2-secret") && shown.contains("password"),
        "{shown}"
    );
    Ok(())
}

async fn secret_settings_never_reach_the_database_file_in_clear(
    kind: Kind,
) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let secret = "s3cret-Feed-pass-4711";
    let mut feed = folder("Feed");
    feed.plugin_id = "feed".to_owned();
    feed.config.insert("password".to_owned(), secret.to_owned());
    feed.secret_keys.insert("password".to_owned());
    let added = store.add_connector(&feed, NOW).await?;
    assert_eq!(
        added.config["password"], secret,
        "in memory, the plugin gets it"
    );

    // Stored before sealing existed: sealed when the manifest says it is a secret.
    let mut old = folder("Old");
    old.config
        .insert("token".to_owned(), "old-clear-token-0815".to_owned());
    let old = store.add_connector(&old, NOW).await?;
    let keys = BTreeSet::from(["token".to_owned()]);
    assert!(store.seal_secrets(&old.id, &keys).await?);
    assert!(!store.seal_secrets(&old.id, &keys).await?, "once");
    assert_eq!(
        store.connector(&old.id).await?.expect("old").config["token"],
        "old-clear-token-0815"
    );
    store.close().await;

    let text = place.raw_contents();
    assert!(
        text.contains("/data/notes"),
        "the test reads what is stored"
    );
    assert!(!text.contains(secret) && !text.contains("old-clear-token-0815"));

    // The key is not in the data folder: a copy of the folder opens no secret.
    assert!(
        !place
            .dir
            .path()
            .join(quarry_store::LEGACY_KEY_FILE)
            .exists()
    );
    std::fs::remove_dir_all(place.keys()).expect("the keys folder goes");
    if kind == Kind::Postgres {
        // A team host without the team's key is refused before it could seal anything.
        let Err(refused) = place.try_open().await else {
            panic!("a host without the key opened the team database");
        };
        assert!(refused.to_string().contains("copy this file"), "{refused}");
        return Ok(());
    }
    let store = place.open().await;
    let feed = store.connector(&added.id).await?.expect("listed still");
    assert!(!feed.config.contains_key("password"));
    Ok(())
}

async fn documents_without_text_are_listed_with_why_and_counted(
    kind: Kind,
) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let c = store.add_connector(&folder("Scans"), NOW).await?;
    let mut scan = doc("scan", "v1");
    scan.no_text = Some("no page has a text layer".into());
    let mut broken = doc("broken", "v1");
    broken.error = Some("not a readable PDF".into());
    let batch = CommitBatch {
        generation: 1,
        changed: vec![doc("text", "v1"), scan, broken],
        ..CommitBatch::default()
    };
    store.commit_batch(&c.id, &batch, NOW).await?;
    assert_eq!(store.count_docs_without_text(&c.id).await?, 1);
    let without = store.docs_without_text(&c.id, 10).await?;
    let shown: Vec<(&str, &str)> = without
        .iter()
        .map(|d| (d.path.as_str(), d.note.as_str()))
        .collect();
    assert_eq!(shown, [("scan.txt", "no page has a text layer")]);
    let failed = store.failed_docs(&c.id, 10).await?;
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].note, "not a readable PDF");

    // A new version with text clears the mark.
    let batch = CommitBatch {
        generation: 2,
        changed: vec![doc("scan", "v2")],
        ..CommitBatch::default()
    };
    store.commit_batch(&c.id, &batch, NOW).await?;
    assert_eq!(store.count_docs_without_text(&c.id).await?, 0);
    Ok(())
}

async fn held_back_documents_are_counted_listed_and_judged_again_when_the_policy_changes(
    kind: Kind,
) -> Result<(), StoreError> {
    let place = Place::new(kind);
    let store = place.open().await;
    let c = store.add_connector(&folder("Shared"), NOW).await?;
    assert_eq!(
        c.credentials.mode,
        CredentialMode::Hold,
        "held back by default"
    );
    let mut key = doc("key", "v1");
    key.held_back = Some("a credential: a private key".into());
    let mut note = doc("note", "v1");
    note.redacted = true;
    let batch = CommitBatch {
        generation: 1,
        changed: vec![doc("plain", "v1"), key, note],
        ..CommitBatch::default()
    };
    store.commit_batch(&c.id, &batch, NOW).await?;
    let listed = store.connector(&c.id).await?.expect("connector");
    assert_eq!((listed.doc_count, listed.held_back_count), (3, 1));
    let held = store.held_back_docs(&c.id, 10).await?;
    assert_eq!(held.len(), 1);
    assert_eq!(
        (held[0].path.as_str(), held[0].note.as_str()),
        ("key.txt", "a credential: a private key")
    );
    assert_eq!(store.count_redacted(&c.id).await?, 1);
    let indexed: Vec<String> = store
        .indexed_docs(&c.id)
        .await?
        .into_iter()
        .map(|(id, _)| id.to_string())
        .collect();
    assert_eq!(indexed, ["note", "plain"]);

    // Releasing a file has the held-back and redacted documents fetched again, and a sync asked.
    let released = store.set_released("Shared", "key.txt", true, NOW).await?;
    assert_eq!(released.credentials.released, ["key.txt"]);
    assert!(released.schedule.sync_requested_ms.is_some());
    let versions = store.all_versions(&c.id).await?;
    let version = |id: &str| versions[&DocId::parse(id).expect("id")].clone();
    assert_eq!(
        (version("key"), version("note"), version("plain")),
        (String::new(), String::new(), "v1".to_owned())
    );
    let err = store
        .set_released("Shared", "other.txt", false, NOW)
        .await
        .expect_err("not released");
    assert!(err.to_string().contains("key.txt"), "{err}");

    // Turning the check back on after it was off has every document judged again.
    store
        .set_credential_mode("Shared", CredentialMode::Off, NOW)
        .await?;
    store
        .commit_batch(
            &c.id,
            &CommitBatch {
                generation: 2,
                changed: vec![doc("plain", "v1")],
                ..CommitBatch::default()
            },
            NOW,
        )
        .await?;
    let on = store
        .set_credential_mode("Shared", CredentialMode::Redact, NOW)
        .await?;
    assert_eq!(on.credentials.mode, CredentialMode::Redact);
    assert_eq!(
        store.all_versions(&c.id).await?[&DocId::parse("plain").expect("id")],
        ""
    );
    Ok(())
}

async fn what_ocr_read_outlives_a_rebuild_of_the_index_while_its_document_is_unchanged(
    kind: Kind,
) -> Result<(), StoreError> {
    use quarry_core::ocr::ScannedPage;
    use quarry_store::OcrRequest;

    let place = Place::new(kind);
    let store = place.open().await;
    let c = store.add_connector(&folder("Scans"), NOW).await?;
    let request = |id: &str, version: &str| OcrRequest {
        doc_id: DocId::parse(id).expect("valid"),
        version: version.to_owned(),
        update_time_ms: NOW,
        pages: vec![1],
        models: "ppocr-v6".to_owned(),
    };
    let batch = |changed: Vec<CatalogDoc>, ocr: Vec<OcrRequest>, ends_full: bool| CommitBatch {
        generation: 1,
        changed,
        ocr,
        ends_full,
        ..CommitBatch::default()
    };
    // Three scans read by OCR.
    let ids = ["kept", "edited", "gone"];
    let scans: Vec<CatalogDoc> = ids.iter().map(|id| doc(id, "v1")).collect();
    let requests = ids.iter().map(|id| request(id, "v1")).collect();
    store
        .commit_batch(&c.id, &batch(scans, requests, true), NOW)
        .await?;
    while let Some(mut job) = store.next_ocr().await? {
        job.read = vec![ScannedPage {
            page: 1,
            text: format!("the words of {}", job.doc_id.as_str()),
            confidence: 0.9,
        }];
        store.ocr_done(&job, false, NOW).await?;
    }
    let kept = |id: &'static str, version: &'static str| {
        let store = &store;
        let c = c.id.clone();
        async move {
            let id = DocId::parse(id).expect("valid");
            store.kept_ocr(&c, &id, version, "ppocr-v6").await
        }
    };
    assert!(kept("kept", "v1").await?.is_some());

    // The index is rebuilt: the catalog is empty, and what OCR read is still there.
    store.forget_index(NOW).await?;
    assert_eq!(store.connector(&c.id).await?.expect("exists").doc_count, 0);
    let words = kept("kept", "v1").await?.expect("set aside");
    assert_eq!(words[0].text, "the words of kept");
    assert!(kept("kept", "v2").await?.is_none(), "another version");

    // The first batch of the rebuilt listing: one scan unchanged, one edited (a new version,
    // queued again); the third is not listed and goes when the full listing ends.
    let edited = batch(
        vec![doc("kept", "v1"), doc("edited", "v2")],
        vec![request("edited", "v2")],
        false,
    );
    store.commit_batch(&c.id, &edited, NOW).await?;
    assert!(
        kept("kept", "v1").await?.is_some(),
        "back in the queue's table, done"
    );
    assert!(kept("edited", "v1").await?.is_none(), "stale");
    let waiting = store.next_ocr().await?.expect("the edited scan waits");
    assert_eq!(
        (waiting.doc_id.as_str(), waiting.version.as_str()),
        ("edited", "v2")
    );
    assert!(
        kept("gone", "v1").await?.is_some(),
        "until the listing ends"
    );
    store
        .commit_batch(&c.id, &batch(Vec::new(), Vec::new(), true), NOW)
        .await?;
    assert!(kept("gone", "v1").await?.is_none());
    assert!(kept("kept", "v1").await?.is_some());
    assert_eq!(store.ocr_pending(Some(&c.id)).await?, 1);
    Ok(())
}

async fn originals_keep_their_verdict_and_the_background_judge_finds_those_without_one(
    kind: Kind,
) -> Result<(), StoreError> {
    use quarry_store::{Fingerprint, Original};
    let place = Place::new(kind);
    let store = place.open().await;
    let c = store.add_connector(&folder("Shared"), NOW).await?;
    let judged = Original::Judged(Fingerprint {
        size: 12,
        sha256: [7; 32],
    });
    let mut clean = doc("clean", "v1");
    clean.original = judged.clone();
    let mut image = doc("image", "v1");
    image.original = Original::Unjudged("the text its images show was not read".into());
    // A redacted document's file is never served: nothing to judge.
    let mut redacted = doc("redacted", "v1");
    redacted.redacted = true;
    let batch = CommitBatch {
        generation: 1,
        changed: vec![clean, image, doc("older", "v1"), redacted],
        ..CommitBatch::default()
    };
    store.commit_batch(&c.id, &batch, NOW).await?;
    let id = |s: &str| DocId::parse(s).expect("id");
    let stored = store.catalog_doc(&c.id, &id("clean")).await?.expect("doc");
    assert_eq!(stored.original, judged);
    assert_eq!(store.count_unjudged(&c.id).await?, 1);
    let unjudged = store.unjudged_docs(&c.id, 10).await?;
    assert_eq!(unjudged[0].note, "the text its images show was not read");

    // The document without a verdict (as an older Quarry left it) waits for the judge.
    let pending = store.pending_originals(10).await?;
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].doc_id.as_str(), pending[0].version.as_str()),
        ("older", "v1")
    );
    assert_eq!(store.count_pending_originals().await?, 1);
    // A verdict for a version a sync has since replaced is not kept.
    let mut stale = pending[0].clone();
    stale.version = "v0".into();
    assert!(!store.set_original(&stale, &judged).await?);
    assert!(store.set_original(&pending[0], &judged).await?);
    assert!(store.pending_originals(10).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn the_database_file_carries_quarrys_application_id_from_its_first_open() {
    let place = Place::new(Kind::Sqlite);
    let store = place.open().await;
    // The file alone, as a copy of it would be, without its write-ahead log.
    let header = std::fs::read(place.dir.path().join("quarry.db")).expect("read");
    assert!(quarry_store::is_quarry_database(&header[..100]));
    store.close().await;
    let reopened = place.open().await;
    reopened.close().await;
    let header = std::fs::read(place.dir.path().join("quarry.db")).expect("read");
    assert!(quarry_store::is_quarry_database(&header[..100]));
}

on_both!(
    keys_authenticate_until_rotated_revoked_or_expired,
    usage_counts_atomically_per_utc_month_and_survives_reopening,
    sharing_selections_follow_connectors,
    connectors_put_first_for_embedding_are_remembered_until_put_back,
    batches_commit_documents_checkpoints_and_counts_together,
    audit_entries_list_newest_first_with_filters,
    secret_settings_never_reach_the_database_file_in_clear,
    documents_without_text_are_listed_with_why_and_counted,
    held_back_documents_are_counted_listed_and_judged_again_when_the_policy_changes,
    what_ocr_read_outlives_a_rebuild_of_the_index_while_its_document_is_unchanged,
    originals_keep_their_verdict_and_the_background_judge_finds_those_without_one,
    a_connectors_debug_form_shows_no_setting_values,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_store_keeps_at_most_sixteen_connections_however_many_requests_wait() {
    let place = Place::new(Kind::Postgres);
    let store = place.open().await;
    let (integration, _) = store
        .create_integration("Crowd", &Sharing::All, Quota::Unlimited, None, NOW)
        .await
        .expect("created");
    let database = place
        .url
        .as_deref()
        .and_then(|u| u.rsplit('/').next())
        .expect("a name");
    let mut tasks = Vec::new();
    for _ in 0..300 {
        let (store, id) = (store.clone(), integration.id.clone());
        tasks.push(tokio::spawn(
            async move { store.count_request(&id, NOW).await },
        ));
    }
    let mut most = 0;
    while tasks.iter().any(|t| !t.is_finished()) {
        let open: usize = pg::shared()
            .psql(
                database,
                &format!(
                    "SELECT count(*) FROM pg_stat_activity
                      WHERE datname = '{database}' AND application_name = 'quarry'"
                ),
            )
            .parse()
            .expect("a count");
        most = most.max(open);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    for task in tasks {
        task.await.expect("a task").expect("counted");
    }
    assert!(most <= 16, "{most} connections");
    assert!(most > 1, "the test saw the connections at work");
    assert_eq!(
        store
            .count_request(&integration.id, NOW)
            .await
            .expect("counted")
            .0,
        301
    );
}

#[tokio::test]
async fn both_dialects_migrate_to_the_same_tables_columns_and_indexes() {
    let migrations = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let names = |dialect: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(migrations.join(dialect))
            .expect("list migrations")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        names("sqlite"),
        names("postgres"),
        "the same versions, named alike"
    );

    let sqlite = Place::new(Kind::Sqlite);
    sqlite.open().await.close().await;
    let file = sqlx::SqlitePool::connect(&format!(
        "sqlite:{}",
        sqlite.dir.path().join("quarry.db").display()
    ))
    .await
    .expect("the file opens");
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
          WHERE m.type = 'table' AND m.name NOT LIKE '\\_%' ESCAPE '\\'
            AND m.name NOT LIKE 'sqlite%'",
    )
    .fetch_all(&file)
    .await
    .expect("columns");
    let on_sqlite: BTreeSet<String> = rows.iter().map(|(t, c)| format!("{t}.{c}")).collect();
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite%'",
    )
    .fetch_all(&file)
    .await
    .expect("indexes");
    let sqlite_indexes: BTreeSet<String> = indexes.into_iter().collect();

    let postgres = Place::new(Kind::Postgres);
    postgres.open().await.close().await;
    let database = postgres
        .url
        .as_deref()
        .and_then(|u| u.rsplit('/').next())
        .expect("a name");
    let server = pg::shared();
    let on_postgres: BTreeSet<String> = server
        .psql(
            database,
            "SELECT table_name || '.' || column_name FROM information_schema.columns
              WHERE table_schema = 'public' AND table_name NOT LIKE '\\_%'
                AND table_name <> 'team_index'",
        )
        .lines()
        .map(str::to_owned)
        .collect();
    let postgres_indexes: BTreeSet<String> = server
        .psql(
            database,
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'
                AND indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '\\_%'
                AND tablename <> 'team_index'",
        )
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(on_sqlite.contains("documents.unjudged"), "{on_sqlite:?}");
    assert_eq!(on_sqlite, on_postgres);
    // SQLite names the unique constraint on integrations' names itself; PostgreSQL has an
    // index on lower(name) for it.
    let mut expected = sqlite_indexes.clone();
    expected.insert("integrations_name".to_owned());
    assert_eq!(expected, postgres_indexes);
    // The team's index log is a team database's only (a data folder's index is its own).
    let team_only = server.psql(
        database,
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'team_index'",
    );
    assert_eq!(team_only.trim(), "5");
}
