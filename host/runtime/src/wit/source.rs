//! The seam between the host and every version: the `source` interface in version-independent
//! types ([`Source`]), how a call ends ([`Answer`], [`CallError`]), and the checks every version
//! shares.

use quarry_core::ocr::ScannedPage;
use quarry_core::{Coverage, DocId, ExtractedText, FileChunk, SourceBatch};
use wasmtime::Store;

use crate::error::GuestError;
use crate::limits::Limits;
use crate::sandbox::instance::HostState;

/// Checks that an answer to `list-changes` is what the contract says: a listing of changes, in
/// one batch.
pub(crate) fn changes_only(batch: SourceBatch) -> Result<SourceBatch, String> {
    if batch.coverage != Coverage::Changes || batch.more {
        return Err(
            "list-changes must answer one batch of coverage `changes` with `more` false".to_owned(),
        );
    }
    Ok(batch)
}

/// Checks an answer to `read-scans` for `asked`: at least one page, each one asked for, in
/// ascending order, its text within the text limit and its confidence in 0..=1.
pub(crate) fn scans_of(
    pages: Vec<ScannedPage>,
    asked: &[u32],
    limits: &Limits,
) -> Result<Vec<ScannedPage>, String> {
    if pages.is_empty() && !asked.is_empty() {
        return Err("read-scans answered no page; it must answer at least the first".to_owned());
    }
    let mut last = 0;
    let mut bytes = 0usize;
    for page in &pages {
        if !asked.contains(&page.page) || page.page <= last {
            return Err(format!(
                "read-scans answered page {} out of order or not asked for (asked: {asked:?})",
                page.page
            ));
        }
        if !(0.0..=1.0).contains(&page.confidence) {
            return Err(format!(
                "read-scans answered a confidence of {} for page {}; it must lie in 0..1",
                page.confidence, page.page
            ));
        }
        last = page.page;
        bytes += page.text.len();
    }
    if bytes > limits.max_text_bytes {
        return Err(format!(
            "read-scans answered {bytes} bytes of text, over the limit of {}",
            limits.max_text_bytes
        ));
    }
    Ok(pages)
}

/// What a connector's `watch` saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// The source changed: sync now.
    Changed,
    /// Nothing changed within the wait: watch again.
    Quiet,
    /// The connector cannot watch its source: sync on the schedule.
    Unsupported,
}

/// How a call into a plugin ended: `Err` when the host stopped it (a trap, the deadline, the
/// memory cap), `Ok(Err(_))` when the plugin returned without a usable value.
pub(crate) type Answer<T> = wasmtime::Result<Result<T, CallError>>;

/// A call the plugin returned from without a usable value.
pub(crate) enum CallError {
    /// The plugin's own error (WIT `connector-error`).
    Guest(GuestError),
    /// An answer that breaks the contract (too large, a bad id); says what was wrong.
    Output(String),
}

/// The `source` interface of every version, in version-independent types: each method is the
/// WIT function of the same name, its answer checked against the contract.
pub(crate) trait Source {
    /// One batch of the listing after `checkpoint`, within `limits`.
    fn list_docs(
        &self,
        store: &mut Store<HostState>,
        checkpoint: Option<&str>,
        limits: &Limits,
    ) -> Answer<SourceBatch>;

    /// What changed at `paths` (sandbox paths), within `limits`; `None` when the plugin cannot
    /// tell from the paths (a full listing is needed). Versions before 0.2.0 never can.
    fn list_changes(
        &self,
        _store: &mut Store<HostState>,
        _paths: &[String],
        _limits: &Limits,
    ) -> Answer<Option<SourceBatch>> {
        Ok(Ok(None))
    }

    /// The text of a document, within `limits`.
    fn fetch_content(
        &self,
        store: &mut Store<HostState>,
        doc: (&DocId, &str),
        limits: &Limits,
    ) -> Answer<ExtractedText>;

    /// The texts of several documents in one call, each checked as [`Source::fetch_content`]
    /// checks one, within `limits`: one result per document, in order. `None` when the version
    /// has no such call (before 0.3.0): ask for one document at a time.
    fn fetch_contents(
        &self,
        _store: &mut Store<HostState>,
        _docs: &[(&DocId, &str)],
        _limits: &Limits,
    ) -> Answer<Option<Vec<Result<ExtractedText, CallError>>>> {
        Ok(Ok(None))
    }

    /// The text OCR reads on `pages` of a document, within `limits`: the pages read, in order,
    /// at least the first. `None` when the version has no such call (before 0.4.0).
    fn read_scans(
        &self,
        _store: &mut Store<HostState>,
        _doc: (&DocId, &str),
        _pages: &[u32],
        _limits: &Limits,
    ) -> Answer<Option<Vec<ScannedPage>>> {
        Ok(Ok(None))
    }

    /// Whether the source changed after `checkpoint`, waiting at most `max_wait_ms` for it.
    /// `None` when the version has no such call (before 0.5.0): the connector cannot watch.
    fn watch(
        &self,
        _store: &mut Store<HostState>,
        _checkpoint: Option<&str>,
        _max_wait_ms: u32,
    ) -> Answer<Option<Watched>> {
        Ok(Ok(None))
    }

    /// At most `range.1` bytes of the original file from offset `range.0`.
    fn read_file(
        &self,
        store: &mut Store<HostState>,
        doc: (&DocId, &str),
        range: (u64, u32),
    ) -> Answer<FileChunk>;

    /// The plugin's verdict on `config`.
    fn validate_config(
        &self,
        store: &mut Store<HostState>,
        config: &[(String, String)],
    ) -> Answer<()>;
}
