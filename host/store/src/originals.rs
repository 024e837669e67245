//! What became of each document's original file when it was judged for credentials: a download
//! serves the original only while it is the file that was judged (its fingerprint), and a file
//! that could not be judged is not served until the user releases it. Also the mark that tells
//! Quarry's own database from any other SQLite file (`PRAGMA application_id`), so that a copy
//! of it in a shared folder is left out whatever its name.

use crate::db::{scalar, sql};
use quarry_core::{ConnectorId, DocId};

use crate::{Store, StoreError};

/// The SQLite `application_id` of Quarry's database (`QRRY`), set at every open.
pub const APPLICATION_ID: u32 = u32::from_be_bytes(*b"QRRY");

/// True when `header` (the first 100 bytes of a file, or more) is the header of a SQLite
/// database that carries Quarry's [`APPLICATION_ID`].
pub fn is_quarry_database(header: &[u8]) -> bool {
    header.starts_with(b"SQLite format 3\0")
        && header.get(68..72) == Some(APPLICATION_ID.to_be_bytes().as_slice())
}

/// The fingerprint of an original file as judged: its size and SHA-256.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes.
    pub sha256: [u8; 32],
}

/// What the credential check made of a document's original file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Original {
    /// Not judged yet: a document an older Quarry indexed (the background judge reads it), or
    /// one a sync is writing. Not served.
    #[default]
    Pending,
    /// Not judged, because the connector's check was off or the user released its path when
    /// it was synced: served while that still holds.
    Unchecked,
    /// Every byte judged, nothing found: served while the file is still this one.
    Judged(Fingerprint),
    /// Could not be judged, for this reason (shown to the user; integrations get fixed words):
    /// not served until the user releases it.
    Unjudged(String),
}

impl Original {
    /// The `original` and `unjudged` columns.
    pub(crate) fn columns(&self) -> (Option<String>, Option<&str>) {
        match self {
            Original::Pending => (None, None),
            Original::Unchecked => (Some(UNCHECKED.to_owned()), None),
            Original::Judged(f) => (Some(format!("{} {}", f.size, hex::encode(f.sha256))), None),
            Original::Unjudged(why) => (None, Some(why)),
        }
    }

    /// From the `original` and `unjudged` columns; a value that does not read is `Pending`
    /// (judged again, never served unjudged).
    pub(crate) fn from_columns(original: Option<&str>, unjudged: Option<String>) -> Original {
        if let Some(why) = unjudged {
            return Original::Unjudged(why);
        }
        match original {
            Some(UNCHECKED) => Original::Unchecked,
            Some(value) => parse_fingerprint(value).map_or(Original::Pending, Original::Judged),
            None => Original::Pending,
        }
    }
}

const UNCHECKED: &str = "unchecked";

/// `<size> <64 hex digits>`.
fn parse_fingerprint(value: &str) -> Option<Fingerprint> {
    let (size, digest) = value.split_once(' ')?;
    let mut sha256 = [0u8; 32];
    hex::decode_to_slice(digest, &mut sha256).ok()?;
    Some(Fingerprint {
        size: size.parse().ok()?,
        sha256,
    })
}

/// A document whose original waits for the background judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingOriginal {
    /// Its connector.
    pub connector: ConnectorId,
    /// Its id.
    pub doc_id: DocId,
    /// Its locator, for the plugin.
    pub locator: String,
    /// Its path (or title), for the rules and for the user.
    pub path: String,
    /// The version indexed: the judge's answer is kept only while it is still this one.
    pub version: String,
    /// Why it has no text though it may hold some (an image, scanned pages), if so.
    pub no_text: Option<String>,
}

impl Store {
    /// Sets Quarry's [`APPLICATION_ID`] in the database's header, and, the first time, writes
    /// the header through to the database file at once (a checkpoint of the write-ahead log),
    /// so that a copy of the file alone carries it.
    pub(crate) async fn mark_as_quarrys(&self) -> Result<(), StoreError> {
        // `QRRY` as SQLite reads it, a signed 32-bit integer (checked below).
        const _: () = assert!(APPLICATION_ID == 1_364_349_529);
        let id: i64 = scalar("PRAGMA application_id")
            .fetch_one(&self.pool)
            .await?;
        if id == 1_364_349_529 {
            return Ok(());
        }
        sql("PRAGMA application_id = 1364349529")
            .execute(&self.pool)
            .await?;
        sql("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Up to `limit` documents whose original was never judged (indexed by an older Quarry),
    /// newest first; held-back documents and those a sync is writing are not among them.
    pub async fn pending_originals(&self, limit: u32) -> Result<Vec<PendingOriginal>, StoreError> {
        let rows = sql(
            "SELECT connector_id, doc_id, locator, coalesce(path, title) AS shown, version, no_text
             FROM documents
             WHERE original IS NULL AND unjudged IS NULL AND held_back IS NULL AND redacted = 0
               AND version != ''
             ORDER BY update_time_ms DESC LIMIT ?",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        let mut pending = Vec::with_capacity(rows.len());
        for row in rows {
            let (Ok(connector), Ok(doc_id)) = (
                ConnectorId::parse(row.try_get::<String, _>("connector_id")?),
                DocId::parse(row.try_get::<String, _>("doc_id")?),
            ) else {
                continue;
            };
            pending.push(PendingOriginal {
                connector,
                doc_id,
                locator: row.try_get("locator")?,
                path: row.try_get("shown")?,
                version: row.try_get("version")?,
                no_text: row.try_get("no_text")?,
            });
        }
        Ok(pending)
    }

    /// Records what the background judge made of a document's original, unless the document
    /// changed meanwhile (a sync wrote another version, which it judged itself). Returns
    /// whether it was recorded.
    pub async fn set_original(
        &self,
        pending: &PendingOriginal,
        original: &Original,
    ) -> Result<bool, StoreError> {
        let (value, unjudged) = original.columns();
        let _turn = self.write_turn().await;
        let done = sql("UPDATE documents SET original = ?, unjudged = ?
             WHERE connector_id = ? AND doc_id = ? AND version = ? AND held_back IS NULL")
        .bind(value)
        .bind(unjudged)
        .bind(pending.connector.as_str())
        .bind(pending.doc_id.as_str())
        .bind(&pending.version)
        .execute(&self.pool)
        .await?;
        Ok(done > 0)
    }

    /// How many documents, in all, wait for the background judge.
    pub async fn count_pending_originals(&self) -> Result<u64, StoreError> {
        let count: i64 = scalar(
            "SELECT count(*) FROM documents
             WHERE original IS NULL AND unjudged IS NULL AND held_back IS NULL AND redacted = 0
               AND version != ''",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(u64::try_from(count).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_as_written_and_garbage_reads_as_pending() {
        let judged = Original::Judged(Fingerprint {
            size: 34 << 20,
            sha256: [0xab; 32],
        });
        for original in [
            Original::Pending,
            Original::Unchecked,
            judged,
            Original::Unjudged("could not be read".to_owned()),
        ] {
            let (value, unjudged) = original.columns();
            let back = Original::from_columns(value.as_deref(), unjudged.map(str::to_owned));
            assert_eq!(back, original);
        }
        for garbage in [
            "",
            "12",
            "12 abc",
            "x 00",
            &format!("-1 {}", "0".repeat(64)),
        ] {
            assert_eq!(
                Original::from_columns(Some(garbage), None),
                Original::Pending,
                "{garbage:?}"
            );
        }
        let bad_hex = format!("12 {}", "zz".repeat(32));
        assert_eq!(
            Original::from_columns(Some(&bad_hex), None),
            Original::Pending
        );
    }

    #[test]
    fn only_a_sqlite_header_with_quarrys_id_is_quarrys_database() {
        let mut header = b"SQLite format 3\0".to_vec();
        header.resize(100, 0);
        assert!(
            !is_quarry_database(&header),
            "another application's database"
        );
        header[68..72].copy_from_slice(b"QRRY");
        assert!(is_quarry_database(&header));
        assert!(!is_quarry_database(&header[..70]), "a header cut short");
        header[0] = b's';
        assert!(!is_quarry_database(&header));
    }
}
