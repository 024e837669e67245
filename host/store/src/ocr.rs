//! The OCR queue and its kept results (table `ocr`). A sync commits a document's request with
//! its catalog entry, in the same transaction, so a crash either loses both (the document is
//! fetched again) or keeps both; the queue reads pages a call at a time and records each call's
//! pages before asking for more, so a restart resumes where it stopped. A rebuild of the index,
//! which empties the catalog, sets the results aside (table `ocr_kept`) until the documents are
//! committed again.

use crate::db::{Conn, Sql, scalar, sql};
use crate::doc_ids::push_ids;
use quarry_core::ocr::ScannedPage;
use quarry_core::{ConnectorId, DocId};

use crate::{Store, StoreError};

/// The catalog's note for a document in whose images OCR found no text: it was read, and holds
/// nothing to judge but its bytes.
pub const NO_TEXT_FOUND_BY_OCR: &str = "no text found by OCR";

/// A document whose pages a sync asks to be read by OCR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcrRequest {
    /// The document.
    pub doc_id: DocId,
    /// Its version as fetched.
    pub version: String,
    /// Its update time: the newest are read first.
    pub update_time_ms: i64,
    /// The pages to read, from 1, ascending.
    pub pages: Vec<u32>,
    /// The models to read them with.
    pub models: String,
}

/// A document the OCR queue reads next, with what is already read of it.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrJob {
    /// Its connector.
    pub connector: ConnectorId,
    /// The document.
    pub doc_id: DocId,
    /// Its locator, for the plugin.
    pub locator: String,
    /// The version the pages belong to.
    pub version: String,
    /// The pages still to read.
    pub pages: Vec<u32>,
    /// The pages read so far.
    pub read: Vec<ScannedPage>,
}

/// Puts `request` of `connector` in the queue (replacing any earlier row of the document),
/// within the caller's transaction.
pub(crate) async fn queue(
    tx: &mut Conn,
    connector: &ConnectorId,
    request: &OcrRequest,
) -> Result<(), StoreError> {
    sql(
        "INSERT INTO ocr (connector_id, doc_id, version, update_time_ms, pages, read, models)
         VALUES (?, ?, ?, ?, ?, '[]', ?)
         ON CONFLICT (connector_id, doc_id) DO UPDATE SET
             version = excluded.version, update_time_ms = excluded.update_time_ms,
             pages = excluded.pages, read = '[]', models = excluded.models,
             done_ms = NULL, error = NULL",
    )
    .bind(connector.as_str())
    .bind(request.doc_id.as_str())
    .bind(&request.version)
    .bind(request.update_time_ms)
    .bind(pages_json(&request.pages))
    .bind(&request.models)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Sets every document's read pages aside before the catalog is emptied, within the caller's
/// transaction.
pub(crate) async fn set_aside(tx: &mut Conn) -> Result<(), StoreError> {
    sql("INSERT INTO ocr_kept
             (connector_id, doc_id, version, update_time_ms, read, models, done_ms)
         SELECT connector_id, doc_id, version, update_time_ms, read, models, done_ms
           FROM ocr WHERE done_ms IS NOT NULL AND error IS NULL
         ON CONFLICT (connector_id, doc_id) DO UPDATE SET
             version = excluded.version, update_time_ms = excluded.update_time_ms,
             read = excluded.read, models = excluded.models, done_ms = excluded.done_ms")
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Takes back what was set aside for the documents `ids` of `connector`, just committed to
/// the catalog: at the version the catalog now has, the pages are done again; at another they
/// are stale. Either way they leave `ocr_kept`.
pub(crate) async fn take_back(
    tx: &mut Conn,
    connector: &ConnectorId,
    ids: &[DocId],
) -> Result<(), StoreError> {
    let mut restore = Sql::build(
        "INSERT INTO ocr (connector_id, doc_id, version, update_time_ms, pages, read, models,
                          done_ms)
         SELECT k.connector_id, k.doc_id, k.version, k.update_time_ms, '[]', k.read, k.models,
                k.done_ms
           FROM ocr_kept k JOIN documents d USING (connector_id, doc_id)
          WHERE d.version = k.version AND connector_id = ",
    );
    restore.push_bind(connector.as_str());
    push_ids(&mut restore, ids);
    restore.push(" ON CONFLICT (connector_id, doc_id) DO NOTHING");
    restore.execute(&mut *tx).await?;
    let mut forget = Sql::build("DELETE FROM ocr_kept WHERE connector_id = ");
    forget.push_bind(connector.as_str());
    push_ids(&mut forget, ids);
    forget.execute(&mut *tx).await?;
    Ok(())
}

/// Drops what is still set aside for `connector` once a full listing has ended: its documents
/// are gone from the source.
pub(crate) async fn drop_set_aside(
    tx: &mut Conn,
    connector: &ConnectorId,
) -> Result<(), StoreError> {
    sql("DELETE FROM ocr_kept WHERE connector_id = ?")
        .bind(connector.as_str())
        .execute(&mut *tx)
        .await?;
    Ok(())
}

fn pages_json(pages: &[u32]) -> String {
    serde_json::to_string(pages).unwrap_or_else(|_| "[]".to_owned())
}

fn read_json(read: &[ScannedPage]) -> String {
    let rows: Vec<(u32, &str, f32)> = read
        .iter()
        .map(|p| (p.page, p.text.as_str(), p.confidence))
        .collect();
    serde_json::to_string(&rows).unwrap_or_else(|_| "[]".to_owned())
}

fn read_of(json: &str) -> Result<Vec<ScannedPage>, StoreError> {
    let rows: Vec<(u32, String, f32)> =
        serde_json::from_str(json).map_err(|e| StoreError::unreadable("ocr.read", e))?;
    Ok(rows
        .into_iter()
        .map(|(page, text, confidence)| ScannedPage {
            page,
            text,
            confidence,
        })
        .collect())
}

/// Binds a job's document and version to a statement's last three parameters
/// (`connector_id = ? AND doc_id = ? AND version = ?`).
trait BindJob {
    fn bind_job(self, job: &OcrJob) -> Self;
}

impl BindJob for Sql {
    fn bind_job(self, job: &OcrJob) -> Self {
        self.bind(job.connector.as_str())
            .bind(job.doc_id.as_str())
            .bind(job.version.as_str())
    }
}

/// The condition of a row that waits: its version is the catalog's, not done, not failed, and
/// its connector is not disabled.
macro_rules! waiting {
    () => {
        "ocr.done_ms IS NULL AND ocr.error IS NULL AND d.version = ocr.version
         AND (SELECT status FROM connectors WHERE id = ocr.connector_id) != 'disabled'"
    };
}

impl Store {
    /// The pages read for `doc` of `connector` at `version` with `models`, when all were.
    pub async fn kept_ocr(
        &self,
        connector: &ConnectorId,
        doc: &DocId,
        version: &str,
        models: &str,
    ) -> Result<Option<Vec<ScannedPage>>, StoreError> {
        // In the queue's table, or set aside while the index is rebuilt.
        let row = sql(
            "SELECT read FROM ocr WHERE connector_id = ?1 AND doc_id = ?2 AND version = ?3
                                     AND models = ?4 AND done_ms IS NOT NULL
             UNION ALL
             SELECT read FROM ocr_kept WHERE connector_id = ?1 AND doc_id = ?2 AND version = ?3
                                         AND models = ?4
             LIMIT 1",
        )
        .bind(connector.as_str())
        .bind(doc.as_str())
        .bind(version)
        .bind(models)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| read_of(&row.try_get::<String, _>("read")?))
            .transpose()
    }

    /// The newest document waiting for OCR, if any.
    pub async fn next_ocr(&self) -> Result<Option<OcrJob>, StoreError> {
        let row = sql(concat!(
            "SELECT ocr.connector_id, ocr.doc_id, d.locator, ocr.version, ocr.pages, ocr.read
               FROM ocr JOIN documents d USING (connector_id, doc_id) WHERE ",
            waiting!(),
            " ORDER BY ocr.update_time_ms DESC LIMIT 1"
        ))
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        Ok(Some(OcrJob {
            connector: ConnectorId::parse(row.try_get::<String, _>("connector_id")?)
                .map_err(|e| StoreError::unreadable("ocr.connector_id", e))?,
            doc_id: DocId::parse(row.try_get::<String, _>("doc_id")?)
                .map_err(|e| StoreError::unreadable("ocr.doc_id", e))?,
            locator: row.try_get("locator")?,
            version: row.try_get("version")?,
            pages: serde_json::from_str(&row.try_get::<String, _>("pages")?)
                .map_err(|e| StoreError::unreadable("ocr.pages", e))?,
            read: read_of(&row.try_get::<String, _>("read")?)?,
        }))
    }

    /// Records what `job` has read so far and what is left.
    pub async fn ocr_progress(&self, job: &OcrJob) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        sql(
            "UPDATE ocr SET pages = ?, read = ? WHERE connector_id = ? AND doc_id = ? AND version = ?",
        )
        .bind(pages_json(&job.pages))
        .bind(read_json(&job.read))
        .bind_job(job)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Marks `job` read and indexed (its text `redacted` or not); the catalog's note that the
    /// document has no text goes when OCR found some (or says OCR found none), and its file,
    /// whose text is now judged, waits for the background judge to fingerprint it.
    pub async fn ocr_done(
        &self,
        job: &OcrJob,
        redacted: bool,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let found = job.read.iter().any(|p| !p.text.trim().is_empty());
        let mut tx = self.write_tx().await?;
        sql("UPDATE ocr SET pages = '[]', read = ?, done_ms = ?
              WHERE connector_id = ? AND doc_id = ? AND version = ?")
        .bind(read_json(&job.read))
        .bind(now_ms)
        .bind_job(job)
        .execute(&mut *tx)
        .await?;
        sql(
            "UPDATE documents SET no_text = CASE WHEN ? = 1 THEN NULL ELSE ? END,
                                  redacted = CASE WHEN ? = 1 THEN 1 ELSE redacted END,
                                  unjudged = NULL
              WHERE connector_id = ? AND doc_id = ? AND version = ? AND held_back IS NULL",
        )
        .bind(found)
        .bind(NO_TEXT_FOUND_BY_OCR)
        .bind(redacted)
        .bind_job(job)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Marks `job` failed with `error`: it is not read again until its version changes.
    pub async fn ocr_failed(&self, job: &OcrJob, error: &str) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        sql("UPDATE ocr SET error = ? WHERE connector_id = ? AND doc_id = ? AND version = ?")
            .bind(error)
            .bind_job(job)
            .execute(&mut *tx)
            .await?;
        sql(
            "UPDATE documents SET no_text = ?, unjudged = CASE WHEN unjudged IS NULL THEN NULL
                 ELSE 'could not be checked for credentials: OCR could not read the text its images show' END
             WHERE connector_id = ? AND doc_id = ? AND version = ?",
        )
        .bind(format!("OCR failed: {error}"))
        .bind_job(job)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Documents waiting for OCR: of `connector`, or of all.
    pub async fn ocr_pending(&self, connector: Option<&ConnectorId>) -> Result<u64, StoreError> {
        let count: i64 = scalar(concat!(
            "SELECT count(*) FROM ocr JOIN documents d USING (connector_id, doc_id) WHERE ",
            waiting!(),
            " AND (? IS NULL OR ocr.connector_id = ?)"
        ))
        .bind(connector.map(ConnectorId::as_str))
        .bind(connector.map(ConnectorId::as_str))
        .fetch_one(&self.pool)
        .await?;
        Ok(u64::try_from(count).unwrap_or(0))
    }
}
