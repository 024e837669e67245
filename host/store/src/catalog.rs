//! The document catalog: what each connector listed, with versions for change detection,
//! locators for downloads, and the listing generation that last wrote each document.
//!
//! A batch of a sync is first prepared here (the documents it will write or delete are marked to
//! be fetched again, new ones registered), then written to the index, then committed here: the
//! documents with their versions and the deletions, then the checkpoint that follows the batch.
//! Each step is a few small transactions, each true on its own (API requests wait for SQLite's
//! write lock, so none holds it long). A crash anywhere re-does at most one batch, and can leave
//! nothing in the index that the catalog does not know (and so would never remove) nor a catalog
//! version the index does not hold.

use std::collections::HashMap;

use crate::db::{Arg, Conn, Row, Sql, scalar, sql};
use quarry_core::{ConnectorId, DocId, DocMeta};

use crate::connectors::to_i64;
use crate::doc_ids::push_ids;
use crate::ocr::{self, OcrRequest};
use crate::originals::Original;
use crate::{Store, StoreError, SyncProgress};

/// Ids per statement in `IN (...)` lists.
const IDS_PER_QUERY: usize = 500;

/// A document as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogDoc {
    /// Its id within the connector.
    pub doc_id: DocId,
    /// The connector's address for it, passed back on fetches.
    pub locator: String,
    /// The version indexed; empty when its text must be fetched again.
    pub version: String,
    /// Title, path, link, type, size, time.
    pub meta: DocMeta,
    /// Whether the connector has text for it.
    pub has_text: bool,
    /// Why its text could not be extracted, if it could not.
    pub error: Option<String>,
    /// Why it has no text though it may hold some (a scanned PDF, an image), if so: it is found
    /// by name only.
    pub no_text: Option<String>,
    /// Why it is held back from the index (a credential, a link to Quarry's own data), if it
    /// is: then it is not searchable, readable or downloadable.
    pub held_back: Option<String>,
    /// True when its text is indexed with its secrets replaced: its original file is not served.
    pub redacted: bool,
    /// What the credential check made of its original file, which decides whether a download
    /// serves it.
    pub original: Original,
}

/// One batch of a sync, to commit after the index holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitBatch {
    /// The listing generation the batch belongs to.
    pub generation: i64,
    /// New or changed documents, now in the index.
    pub changed: Vec<CatalogDoc>,
    /// Documents gone from the source (and from the index).
    pub deleted: Vec<DocId>,
    /// Where the listing resumes.
    pub checkpoint: String,
    /// True when `checkpoint` continues the listing.
    pub more: bool,
    /// True when the batch is the first of a full listing.
    pub starts_full: bool,
    /// True when the batch completes a full listing.
    pub ends_full: bool,
    /// Counts so far.
    pub progress: SyncProgress,
    /// Documents of `changed` whose pages wait for OCR: queued with their catalog entries.
    pub ocr: Vec<OcrRequest>,
}

/// A document of the catalog with a word for its user: why its text could not be extracted, or
/// why it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotedDoc {
    /// Its id.
    pub doc_id: DocId,
    /// Its path (or title, when it has no path).
    pub path: String,
    /// What its user is told: why its text could not be extracted, or why it has none.
    pub note: String,
}

impl Store {
    /// The stored versions of those of `ids` the catalog has.
    pub async fn catalog_versions(
        &self,
        connector: &ConnectorId,
        ids: &[DocId],
    ) -> Result<HashMap<DocId, String>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        versions_of(&mut conn, connector, ids).await
    }

    /// True when the connector has documents whose path lies under `path` (a folder's path,
    /// relative to the source: `notes/2026` covers `notes/2026/a.md`).
    pub async fn has_documents_under(
        &self,
        connector: &ConnectorId,
        path: &str,
    ) -> Result<bool, StoreError> {
        let folder = path.trim_end_matches('/');
        // Paths under `folder/` sort from `folder/` to just before `folder0` ('0' follows '/').
        let found: Option<i64> = scalar(
            "SELECT CAST(1 AS BIGINT) FROM documents
             WHERE connector_id = ? AND path > ? AND path < ? LIMIT 1",
        )
        .bind(connector.as_str())
        .bind(format!("{folder}/"))
        .bind(format!("{folder}0"))
        .fetch_optional(&self.pool)
        .await?;
        Ok(found.is_some())
    }

    /// Prepares a batch before the index is written: `changed` (as listed, to be written) are
    /// registered if new, with no version and a generation no listing has, and `deleted` lose
    /// their version. Should the process stop before [`Store::commit_batch`], the next sync
    /// fetches them again, or removes them if the source no longer has them.
    pub async fn prepare_batch(
        &self,
        connector: &ConnectorId,
        changed: &[CatalogDoc],
        deleted: &[DocId],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        if changed.is_empty() && deleted.is_empty() {
            return Ok(());
        }
        // In small transactions: API requests wait for SQLite's write lock, and each part is
        // safe on its own.
        for chunk in changed.chunks(ROWS_PER_TX) {
            let mut tx = self.write_tx().await?;
            let ids: Vec<DocId> = chunk.iter().map(|d| d.doc_id.clone()).collect();
            // Known documents lose their version; then the new ones are added (known ones are
            // left alone by the insert), which counts them.
            forget_versions(&mut tx, connector, &ids).await?;
            let added = insert_docs(&mut tx, connector, chunk, Written::Prepared, now_ms).await?;
            add_to_count(&mut tx, connector, i64::try_from(added).unwrap_or(i64::MAX)).await?;
            tx.commit().await?;
        }
        for chunk in deleted.chunks(IDS_PER_QUERY) {
            let mut tx = self.write_tx().await?;
            forget_versions(&mut tx, connector, chunk).await?;
            tx.commit().await?;
        }
        Ok(())
    }

    /// The stored version of every document of the connector (a full listing compares what it
    /// lists with these, and what it did not list is gone from the source).
    pub async fn all_versions(
        &self,
        connector: &ConnectorId,
    ) -> Result<HashMap<DocId, String>, StoreError> {
        let rows = sql("SELECT doc_id, version FROM documents WHERE connector_id = ?")
            .bind(connector.as_str())
            .fetch_all(&self.pool)
            .await?;
        let mut versions = HashMap::with_capacity(rows.len());
        for row in rows {
            if let Ok(id) = DocId::parse(row.try_get::<String, _>("doc_id")?) {
                versions.insert(id, row.try_get("version")?);
            }
        }
        Ok(versions)
    }

    /// Documents of the connector whose text could not be extracted, with the reasons, by path;
    /// at most `limit`.
    pub async fn failed_docs(
        &self,
        connector: &ConnectorId,
        limit: u32,
    ) -> Result<Vec<NotedDoc>, StoreError> {
        self.noted_docs(
            "SELECT doc_id, coalesce(path, title) AS shown, error AS note FROM documents
             WHERE connector_id = ? AND error IS NOT NULL ORDER BY shown LIMIT ?",
            connector,
            limit,
        )
        .await
    }

    /// Documents of the connector that have no text though they may hold some (scanned PDFs,
    /// images), with why, by path; at most `limit`.
    pub async fn docs_without_text(
        &self,
        connector: &ConnectorId,
        limit: u32,
    ) -> Result<Vec<NotedDoc>, StoreError> {
        self.noted_docs(
            "SELECT doc_id, coalesce(path, title) AS shown, no_text AS note FROM documents
             WHERE connector_id = ? AND no_text IS NOT NULL ORDER BY shown LIMIT ?",
            connector,
            limit,
        )
        .await
    }

    /// How many documents of the connector have no text though they may hold some.
    pub async fn count_docs_without_text(
        &self,
        connector: &ConnectorId,
    ) -> Result<u64, StoreError> {
        self.count_docs(
            "SELECT count(*) FROM documents WHERE connector_id = ? AND no_text IS NOT NULL",
            connector,
        )
        .await
    }

    /// Documents of the connector held back from the index, with why, by path; at most `limit`.
    pub async fn held_back_docs(
        &self,
        connector: &ConnectorId,
        limit: u32,
    ) -> Result<Vec<NotedDoc>, StoreError> {
        self.noted_docs(
            "SELECT doc_id, coalesce(path, title) AS shown, held_back AS note FROM documents
             WHERE connector_id = ? AND held_back IS NOT NULL ORDER BY shown LIMIT ?",
            connector,
            limit,
        )
        .await
    }

    /// How many documents of the connector have an original that could not be judged (not
    /// served until the user releases it).
    pub async fn count_unjudged(&self, connector: &ConnectorId) -> Result<u64, StoreError> {
        self.count_docs(
            "SELECT count(*) FROM documents WHERE connector_id = ? AND unjudged IS NOT NULL",
            connector,
        )
        .await
    }

    /// Documents of the connector whose original could not be judged, with why, by path; at
    /// most `limit`.
    pub async fn unjudged_docs(
        &self,
        connector: &ConnectorId,
        limit: u32,
    ) -> Result<Vec<NotedDoc>, StoreError> {
        self.noted_docs(
            "SELECT doc_id, coalesce(path, title) AS shown, unjudged AS note FROM documents
             WHERE connector_id = ? AND unjudged IS NOT NULL ORDER BY shown LIMIT ?",
            connector,
            limit,
        )
        .await
    }

    /// How many documents of the connector are indexed with their secrets redacted.
    pub async fn count_redacted(&self, connector: &ConnectorId) -> Result<u64, StoreError> {
        self.count_docs(
            "SELECT count(*) FROM documents WHERE connector_id = ? AND redacted != 0",
            connector,
        )
        .await
    }

    /// The documents of the connector that may be in the index (not held back), with their
    /// paths: what a check of the index for credentials reads.
    pub async fn indexed_docs(
        &self,
        connector: &ConnectorId,
    ) -> Result<Vec<(DocId, String)>, StoreError> {
        let rows = sql(
            "SELECT doc_id, coalesce(path, title) AS shown FROM documents
             WHERE connector_id = ? AND held_back IS NULL",
        )
        .bind(connector.as_str())
        .fetch_all(&self.pool)
        .await?;
        let mut docs = Vec::with_capacity(rows.len());
        for row in rows {
            if let Ok(id) = DocId::parse(row.try_get::<String, _>("doc_id")?) {
                docs.push((id, row.try_get("shown")?));
            }
        }
        Ok(docs)
    }

    /// Marks documents as held back (`why`) once the index no longer holds them.
    pub async fn hold_back(
        &self,
        connector: &ConnectorId,
        held: &[(DocId, String)],
    ) -> Result<(), StoreError> {
        for chunk in held.chunks(ROWS_PER_TX) {
            let mut tx = self.write_tx().await?;
            for (id, why) in chunk {
                sql("UPDATE documents SET held_back = ?, redacted = 0
                     WHERE connector_id = ? AND doc_id = ?")
                .bind(why)
                .bind(connector.as_str())
                .bind(id.as_str())
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        }
        Ok(())
    }

    /// Makes the next sync fetch again every document of the connector that is held back or
    /// redacted (its credential settings changed, or files were released). Returns how many.
    pub async fn refetch_judged(&self, connector: &ConnectorId) -> Result<u64, StoreError> {
        let _turn = self.write_turn().await;
        let done = sql("UPDATE documents SET version = ''
             WHERE connector_id = ? AND (held_back IS NOT NULL OR redacted != 0)")
        .bind(connector.as_str())
        .execute(&self.pool)
        .await?;
        Ok(done)
    }

    /// Makes the next sync fetch `ids` of the connector again.
    pub async fn refetch(&self, connector: &ConnectorId, ids: &[DocId]) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        forget_versions(&mut tx, connector, ids).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Makes the next sync fetch again every document of the connector.
    pub async fn refetch_all(&self, connector: &ConnectorId) -> Result<u64, StoreError> {
        let _turn = self.write_turn().await;
        let done = sql("UPDATE documents SET version = '' WHERE connector_id = ?")
            .bind(connector.as_str())
            .execute(&self.pool)
            .await?;
        Ok(done)
    }

    /// The count `sql` answers for a connector.
    async fn count_docs(
        &self,
        text: &'static str,
        connector: &ConnectorId,
    ) -> Result<u64, StoreError> {
        let count: i64 = scalar(text)
            .bind(connector.as_str())
            .fetch_one(&self.pool)
            .await?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// The documents `sql` selects (`doc_id`, `shown`, `note`, for a connector and a limit).
    pub(crate) async fn noted_docs(
        &self,
        text: &'static str,
        connector: &ConnectorId,
        limit: u32,
    ) -> Result<Vec<NotedDoc>, StoreError> {
        let rows = sql(text)
            .bind(connector.as_str())
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        let mut noted = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.try_get("doc_id")?;
            noted.push(NotedDoc {
                doc_id: DocId::parse(id)
                    .map_err(|e| StoreError::unreadable("documents.doc_id", e))?,
                path: row.try_get("shown")?,
                note: row.try_get("note")?,
            });
        }
        Ok(noted)
    }

    /// One document of the catalog.
    pub async fn catalog_doc(
        &self,
        connector: &ConnectorId,
        doc: &DocId,
    ) -> Result<Option<CatalogDoc>, StoreError> {
        let row = sql("SELECT * FROM documents WHERE connector_id = ? AND doc_id = ?")
            .bind(connector.as_str())
            .bind(doc.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(doc_from_row).transpose()
    }

    /// Commits a batch once the index holds it: its documents and deletions (with the document
    /// count), then the connector's checkpoint, generation and progress.
    pub async fn commit_batch(
        &self,
        connector: &ConnectorId,
        batch: &CommitBatch,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        // The documents and the deletions first, in small transactions (API requests wait for
        // SQLite's write lock): the index already holds them, so each part is true on its own.
        for chunk in batch.changed.chunks(ROWS_PER_TX) {
            let mut tx = self.write_tx().await?;
            let ids: Vec<DocId> = chunk.iter().map(|d| d.doc_id.clone()).collect();
            let known = versions_of(&mut tx, connector, &ids).await?;
            let added = ids.iter().filter(|id| !known.contains_key(*id)).count();
            let generation = batch.generation;
            insert_docs(
                &mut tx,
                connector,
                chunk,
                Written::Committed { generation },
                now_ms,
            )
            .await?;
            add_to_count(&mut tx, connector, i64::try_from(added).unwrap_or(i64::MAX)).await?;
            for request in batch.ocr.iter().filter(|r| ids.contains(&r.doc_id)) {
                ocr::queue(&mut tx, connector, request).await?;
            }
            ocr::take_back(&mut tx, connector, &ids).await?;
            tx.commit().await?;
        }
        for chunk in batch.deleted.chunks(IDS_PER_QUERY) {
            let mut tx = self.write_tx().await?;
            let mut query = Sql::build("DELETE FROM documents WHERE connector_id = ");
            query.push_bind(connector.as_str());
            push_ids(&mut query, chunk);
            let removed = query.execute(&mut *tx).await?;
            add_to_count(&mut tx, connector, -i64::try_from(removed).unwrap_or(0)).await?;
            tx.commit().await?;
        }
        // Then the checkpoint, which makes the batch done.
        let mut tx = self.write_tx().await?;
        // On a listing's first batch, `expected` takes the count as it stands, close to the
        // previous listing's (it already has this batch's new documents).
        sql(
            "UPDATE connectors SET checkpoint = ?, listing_more = ?, generation = ?,
                                   expected = CASE WHEN ? = 1 THEN NULL
                                                   WHEN ? = 1 AND last_full_ms IS NOT NULL THEN doc_count
                                                   WHEN ? = 1 THEN NULL
                                                   ELSE expected END,
                                   full_requested = CASE WHEN ? = 1 THEN 0 ELSE full_requested END,
                                   last_full_ms = CASE WHEN ? = 1 THEN ? ELSE last_full_ms END,
                                   listed = ?, indexed = ?, failed = ?
             WHERE id = ?",
        )
        .bind(&batch.checkpoint)
        .bind(batch.more)
        .bind(batch.generation)
        .bind(batch.ends_full)
        .bind(batch.starts_full)
        .bind(batch.starts_full)
        .bind(batch.starts_full)
        .bind(batch.ends_full)
        .bind(now_ms)
        .bind(to_i64(batch.progress.listed))
        .bind(to_i64(batch.progress.indexed))
        .bind(to_i64(batch.progress.failed))
        .bind(connector.as_str())
        .execute(&mut *tx)
        .await?;
        if batch.ends_full {
            ocr::drop_set_aside(&mut tx, connector).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// The key of the credential rules' version in the `data_folder` table.
const CREDENTIAL_RULES: &str = "credential_rules";

impl Store {
    /// The version of the credential rules the index was last checked with; 0 when never.
    pub async fn credential_rules_checked(&self) -> Result<u32, StoreError> {
        let value: Option<String> = scalar("SELECT value FROM data_folder WHERE key = ?")
            .bind(CREDENTIAL_RULES)
            .fetch_optional(&self.pool)
            .await?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// Records that the index was checked with version `version` of the credential rules.
    pub async fn set_credential_rules_checked(&self, version: u32) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sql("INSERT INTO data_folder (key, value) VALUES (?, ?)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        .bind(CREDENTIAL_RULES)
        .bind(version.to_string())
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// Rows per multi-row insert (17 values each, well under SQLite's limit of bound values).
const ROWS_PER_INSERT: usize = 64;

/// Catalog rows written per transaction: a few milliseconds of SQLite's write lock.
const ROWS_PER_TX: usize = 128;

/// Forgets the versions of `ids` (they will be fetched again unless committed).
async fn forget_versions(
    conn: &mut Conn,
    connector: &ConnectorId,
    ids: &[DocId],
) -> Result<(), StoreError> {
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let mut query = Sql::build("UPDATE documents SET version = '' WHERE connector_id = ");
        query.push_bind(connector.as_str());
        push_ids(&mut query, chunk);
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Adds `delta` to the connector's document count.
async fn add_to_count(
    conn: &mut Conn,
    connector: &ConnectorId,
    delta: i64,
) -> Result<(), StoreError> {
    if delta != 0 {
        sql("UPDATE connectors
                SET doc_count = CASE WHEN doc_count + ?1 > 0 THEN doc_count + ?1 ELSE 0 END
              WHERE id = ?2")
        .bind(delta)
        .bind(connector.as_str())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// What catalog rows [`insert_docs`] writes.
#[derive(Clone, Copy)]
enum Written {
    /// Prepared before the index write: no version, generation 0 (no listing saw it); rows
    /// that exist are left alone.
    Prepared,
    /// Committed after the index write: the version and error as given, in `generation`;
    /// rows that exist are replaced.
    Committed { generation: i64 },
}

/// Writes catalog rows for `docs`, a few dozen per statement (a transaction holds SQLite's write
/// lock, which API requests wait for, so it must be short). Returns the rows written.
async fn insert_docs(
    conn: &mut Conn,
    connector: &ConnectorId,
    docs: &[CatalogDoc],
    row: Written,
    now_ms: i64,
) -> Result<u64, StoreError> {
    let mut written = 0;
    for chunk in docs.chunks(ROWS_PER_INSERT) {
        let mut query = Sql::build(
            "INSERT INTO documents (connector_id, doc_id, locator, version, title, path, url, \
             mime_type, size_bytes, update_time_ms, has_text, generation, indexed_ms, error, \
             no_text, held_back, redacted, original, unjudged) VALUES ",
        );
        for (n, doc) in chunk.iter().enumerate() {
            let (version, generation, error, no_text, held_back, redacted, original) = match row {
                Written::Prepared => ("", 0, None, None, None, false, &Original::Pending),
                Written::Committed { generation } => (
                    doc.version.as_str(),
                    generation,
                    doc.error.as_deref(),
                    doc.no_text.as_deref(),
                    doc.held_back.as_deref(),
                    doc.redacted,
                    &doc.original,
                ),
            };
            let (original, unjudged) = original.columns();
            if n > 0 {
                query.push(", ");
            }
            query.push_tuple(vec![
                connector.as_str().into(),
                doc.doc_id.as_str().into(),
                Arg::from(&doc.locator),
                version.into(),
                Arg::from(&doc.meta.title),
                Arg::from(&doc.meta.path),
                Arg::from(&doc.meta.url),
                Arg::from(&doc.meta.mime_type),
                to_i64(doc.meta.size_bytes).into(),
                doc.meta.update_time_ms.into(),
                doc.has_text.into(),
                generation.into(),
                now_ms.into(),
                error.into(),
                no_text.into(),
                held_back.into(),
                redacted.into(),
                original.into(),
                unjudged.into(),
            ]);
        }
        query.push(match row {
            Written::Prepared => " ON CONFLICT (connector_id, doc_id) DO NOTHING",
            Written::Committed { .. } => {
                " ON CONFLICT (connector_id, doc_id) DO UPDATE SET \
                 locator = excluded.locator, version = excluded.version, \
                 title = excluded.title, path = excluded.path, url = excluded.url, \
                 mime_type = excluded.mime_type, size_bytes = excluded.size_bytes, \
                 update_time_ms = excluded.update_time_ms, has_text = excluded.has_text, \
                 generation = excluded.generation, indexed_ms = excluded.indexed_ms, \
                 error = excluded.error, no_text = excluded.no_text, \
                 held_back = excluded.held_back, redacted = excluded.redacted, \
                 original = excluded.original, unjudged = excluded.unjudged"
            }
        });
        written += query.execute(&mut *conn).await?;
    }
    Ok(written)
}

/// The stored versions of those of `ids` the catalog has for the connector.
async fn versions_of(
    conn: &mut Conn,
    connector: &ConnectorId,
    ids: &[DocId],
) -> Result<HashMap<DocId, String>, StoreError> {
    let mut versions = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let mut query = Sql::build("SELECT doc_id, version FROM documents WHERE connector_id = ");
        query.push_bind(connector.as_str());
        push_ids(&mut query, chunk);
        for row in query.fetch_all(&mut *conn).await? {
            let id: String = row.try_get("doc_id")?;
            if let Ok(id) = DocId::parse(id) {
                versions.insert(id, row.try_get("version")?);
            }
        }
    }
    Ok(versions)
}

fn doc_from_row(row: &Row) -> Result<CatalogDoc, StoreError> {
    let id: String = row.try_get("doc_id")?;
    Ok(CatalogDoc {
        doc_id: DocId::parse(id).map_err(|e| StoreError::unreadable("documents.doc_id", e))?,
        locator: row.try_get("locator")?,
        version: row.try_get("version")?,
        meta: DocMeta {
            title: row.try_get("title")?,
            path: row.try_get("path")?,
            url: row.try_get("url")?,
            mime_type: row.try_get("mime_type")?,
            size_bytes: u64::try_from(row.try_get::<i64, _>("size_bytes")?).unwrap_or(0),
            update_time_ms: row.try_get("update_time_ms")?,
        },
        has_text: row.flag("has_text")?,
        error: row.try_get("error")?,
        no_text: row.try_get("no_text")?,
        held_back: row.try_get("held_back")?,
        redacted: row.flag("redacted")?,
        original: Original::from_columns(
            row.try_get::<Option<String>, _>("original")?.as_deref(),
            row.try_get("unjudged")?,
        ),
    })
}
