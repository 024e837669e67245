//! What plugins of 0.1.0 (and 0.2.0 and 0.3.0, whose types are the same) return, checked against the
//! contract and turned into version-independent types. Everything here is untrusted input: each check names what was wrong.

use std::collections::BTreeSet;

use quarry_core::{Coverage, DocId, DocMeta, ExtractedText, FileChunk, SourceBatch, SourceDoc};

use super::bindings::quarry::connector::types as wit;
use crate::GuestError;
use crate::limits::{Limits, MAX_FIELD_BYTES, MAX_LOCATOR_BYTES, MAX_METADATA_ENTRIES};
use crate::sandbox::reports::LogLevel;

/// Checks and converts a listing batch.
pub(super) fn batch(batch: wit::Batch, limits: &Limits) -> Result<SourceBatch, String> {
    let count = batch.upserts.len() + batch.deletes.len();
    if count > limits.max_batch_docs {
        return Err(format!(
            "a batch of {count} documents; the limit is {} per batch",
            limits.max_batch_docs
        ));
    }
    check_len("checkpoint", &batch.checkpoint, MAX_LOCATOR_BYTES)?;
    let mut seen = BTreeSet::new();
    let mut upserts = Vec::with_capacity(batch.upserts.len());
    for meta in batch.upserts {
        let doc = doc(meta)?;
        if !seen.insert(doc.id.clone()) {
            return Err(format!("document id {} appears twice in one batch", doc.id));
        }
        upserts.push(doc);
    }
    let deletes = batch
        .deletes
        .into_iter()
        .map(|id| DocId::parse(id).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SourceBatch {
        upserts,
        deletes,
        checkpoint: batch.checkpoint,
        more: batch.more,
        coverage: match batch.coverage {
            wit::Coverage::Full => Coverage::Full,
            wit::Coverage::Changes => Coverage::Changes,
        },
    })
}

fn doc(meta: wit::DocMeta) -> Result<SourceDoc, String> {
    let id = DocId::parse(meta.id).map_err(|e| e.to_string())?;
    let field = |name: &str, value: &str, max: usize| {
        check_len(name, value, max).map_err(|e| format!("document {id}: {e}"))
    };
    field("locator", &meta.locator, MAX_LOCATOR_BYTES)?;
    field("title", &meta.title, MAX_FIELD_BYTES)?;
    field("mime-type", &meta.mime_type, MAX_FIELD_BYTES)?;
    field("version", &meta.version, MAX_FIELD_BYTES)?;
    for (name, value) in [("path", &meta.path), ("url", &meta.url)] {
        if let Some(value) = value {
            field(name, value, MAX_FIELD_BYTES)?;
        }
    }
    Ok(SourceDoc {
        id,
        locator: meta.locator,
        meta: DocMeta {
            title: meta.title,
            path: meta.path,
            url: meta.url,
            mime_type: meta.mime_type,
            size_bytes: meta.size_bytes,
            update_time_ms: meta.update_time_ms,
        },
        version: meta.version,
        has_text: meta.has_text,
    })
}

/// Checks and converts extracted text.
pub(super) fn content(content: wit::Content, limits: &Limits) -> Result<ExtractedText, String> {
    if content.text.len() > limits.max_text_bytes {
        return Err(format!(
            "{} MiB of text; the limit is {} MiB per document",
            content.text.len() >> 20,
            limits.max_text_bytes >> 20
        ));
    }
    let mut previous: Option<u32> = None;
    for &start in &content.page_starts {
        let ok = match previous {
            None => start == 0,
            Some(p) => start > p,
        } && content.text.is_char_boundary(start as usize);
        if !ok {
            return Err(format!(
                "page-starts must begin at 0 and increase, each on a character boundary of the text; got {:?}",
                content.page_starts.iter().take(10).collect::<Vec<_>>()
            ));
        }
        previous = Some(start);
    }
    if content.metadata.len() > MAX_METADATA_ENTRIES {
        return Err(format!(
            "{} metadata entries; the limit is {MAX_METADATA_ENTRIES}",
            content.metadata.len()
        ));
    }
    for (key, value) in &content.metadata {
        check_len("metadata key", key, 128)?;
        check_len("metadata value", value, MAX_FIELD_BYTES)?;
    }
    Ok(ExtractedText {
        text: content.text,
        page_starts: content.page_starts,
        metadata: content.metadata,
    })
}

/// Checks and converts a file chunk read with `max_bytes`.
pub(super) fn chunk(chunk: wit::FileChunk, max_bytes: u32) -> Result<FileChunk, String> {
    if chunk.data.len() > max_bytes as usize {
        return Err(format!(
            "{} bytes for a read of at most {max_bytes}",
            chunk.data.len()
        ));
    }
    Ok(FileChunk {
        data: chunk.data,
        total_size: chunk.total_size,
    })
}

/// The plugin's own error.
pub(super) fn guest_error(error: wit::ConnectorError) -> GuestError {
    let short = |mut m: String| {
        m.truncate(m.floor_char_boundary(MAX_FIELD_BYTES));
        m
    };
    match error {
        wit::ConnectorError::NotFound(m) => GuestError::NotFound(short(m)),
        wit::ConnectorError::Unavailable(m) => GuestError::Unavailable(short(m)),
        wit::ConnectorError::InvalidConfig(m) => GuestError::InvalidConfig(short(m)),
        wit::ConnectorError::Other(m) => GuestError::Other(short(m)),
    }
}

/// The level of a log line.
pub(super) fn log_level(level: wit::LogLevel) -> LogLevel {
    match level {
        wit::LogLevel::Trace => LogLevel::Trace,
        wit::LogLevel::Debug => LogLevel::Debug,
        wit::LogLevel::Info => LogLevel::Info,
        wit::LogLevel::Warn => LogLevel::Warn,
        wit::LogLevel::Error => LogLevel::Error,
    }
}

fn check_len(name: &str, value: &str, max: usize) -> Result<(), String> {
    if value.len() > max {
        return Err(format!(
            "{name} is {} bytes; the limit is {max}",
            value.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &str) -> wit::DocMeta {
        wit::DocMeta {
            id: id.into(),
            locator: "a.txt".into(),
            title: "a.txt".into(),
            path: None,
            url: None,
            mime_type: "text/plain".into(),
            size_bytes: 1,
            update_time_ms: 0,
            version: "1".into(),
            has_text: true,
        }
    }

    fn batch_of(upserts: Vec<wit::DocMeta>) -> wit::Batch {
        wit::Batch {
            upserts,
            deletes: vec![],
            checkpoint: String::new(),
            more: false,
            coverage: wit::Coverage::Full,
        }
    }

    #[test]
    fn refuses_bad_ids_duplicates_and_oversized_batches() {
        let limits = Limits::default();
        assert!(batch(batch_of(vec![meta("ok_1")]), &limits).is_ok());
        let err = batch(batch_of(vec![meta("../x")]), &limits).expect_err("bad id");
        assert!(err.contains("doc_id"), "{err}");
        let err = batch(batch_of(vec![meta("a"), meta("a")]), &limits).expect_err("dup");
        assert!(err.contains("twice"), "{err}");
        let small = Limits {
            max_batch_docs: 1,
            ..Limits::default()
        };
        let err = batch(batch_of(vec![meta("a"), meta("b")]), &small).expect_err("too many");
        assert!(err.contains("limit is 1"), "{err}");
    }

    #[test]
    fn refuses_page_starts_that_do_not_fit_the_text() {
        let limits = Limits::default();
        let with_pages = |starts: Vec<u32>| wit::Content {
            text: "aé b".into(),
            page_starts: starts,
            metadata: vec![],
        };
        assert!(content(with_pages(vec![0, 3]), &limits).is_ok());
        for bad in [vec![1], vec![0, 2], vec![0, 3, 3], vec![0, 99]] {
            assert!(
                content(with_pages(bad.clone()), &limits).is_err(),
                "{bad:?}"
            );
        }
    }
}
