//! The OCR queue's work on the syncer: the newest document waiting for OCR has its pages read
//! by its connector (`read-scans`, the host's models behind `recognize-text`), a call at a
//! time, each call's pages recorded before the next; then its text, judged for credentials as
//! a sync's is, takes its place in the index.

use std::sync::atomic::{AtomicBool, Ordering};

use quarry_core::{ExtractedText, SourceDoc};
use quarry_runtime::{Grant, Session};
use quarry_store::{OcrJob, now_ms};

use super::Syncer;
use crate::SyncError;
use crate::credentials::{Judgement, judge};
use crate::scan_text;

impl Syncer {
    /// Reads the next document waiting for OCR. `false` when none waits. A stop leaves the
    /// document waiting, its pages read so far kept.
    pub fn read_next_scans(&self, stop: &AtomicBool) -> Result<bool, SyncError> {
        let Some(mut job) = self.block(self.store.next_ocr())? else {
            return Ok(false);
        };
        let Some(connector) = self.block(self.store.connector(&job.connector))? else {
            return Ok(false);
        };
        let Some(plugin) = self.plugins.get(&connector.plugin_id) else {
            let missing = SyncError::PluginMissing(connector.plugin_id.clone());
            self.block(self.store.ocr_failed(&job, &missing.to_string()))?;
            return Ok(true);
        };
        if plugin.ocr_models().is_none() {
            // Its plugin no longer reads scans (replaced by an older version): not read.
            let why = "the connector's plugin does not read scans (WIT 0.4.0 `read-scans`)";
            self.block(self.store.ocr_failed(&job, why))?;
            return Ok(true);
        }
        let grant = Grant::from_stored(&connector.grant.dirs, &connector.grant.hosts);
        let mut session = match plugin.session(&connector.config, &grant, None) {
            Ok(session) => session,
            Err(e) => {
                self.block(self.store.ocr_failed(&job, &e.to_string()))?;
                return Ok(true);
            }
        };
        let read = self.read_pages(&mut session, &mut job, stop);
        self.record_usage(&connector, &session);
        match read {
            Ok(true) => {}
            Ok(false) => return Ok(true),
            Err(e) => {
                tracing::info!(connector = %connector.name, doc = %job.doc_id, "OCR failed: {e}");
                self.block(self.store.ocr_failed(&job, &e))?;
                return Ok(true);
            }
        }
        let redacted = self.index_scans(&connector, &job)?;
        self.block(self.store.ocr_done(&job, redacted, now_ms()))?;
        Ok(true)
    }

    /// Reads `job`'s pages, recording each call's; `Ok(false)` when stopped first.
    fn read_pages(
        &self,
        session: &mut Session,
        job: &mut OcrJob,
        stop: &AtomicBool,
    ) -> Result<bool, String> {
        while let Some(&first) = job.pages.first() {
            if stop.load(Ordering::Relaxed) {
                return Ok(false);
            }
            let pages = session
                .read_scans(&job.doc_id, &job.locator, &job.pages)
                .map_err(|e| e.to_string())?
                .ok_or("the connector's WIT version has no read-scans")?;
            let last = pages.last().map_or(first, |p| p.page);
            job.pages.retain(|&p| p > last);
            job.read.extend(pages);
            if let Err(e) = self.block(self.store.ocr_progress(job)) {
                tracing::warn!(doc = %job.doc_id, "cannot record OCR progress: {e}");
            }
        }
        Ok(true)
    }

    /// Puts `job`'s text in the index, judged for credentials; a document held back for what
    /// OCR read leaves the index. Answers whether its text was redacted.
    fn index_scans(
        &self,
        connector: &quarry_store::Connector,
        job: &OcrJob,
    ) -> Result<bool, SyncError> {
        let Some(mut pending) = self.index.document_to_revise(&connector.id, &job.doc_id)? else {
            return Ok(false);
        };
        let doc = &mut pending.doc;
        let mut content = ExtractedText {
            text: std::mem::take(&mut doc.text),
            page_starts: std::mem::take(&mut doc.page_starts),
            metadata: std::mem::take(&mut doc.metadata),
        };
        scan_text::merge(&mut content, &job.read);
        let source = SourceDoc {
            id: job.doc_id.clone(),
            locator: job.locator.clone(),
            meta: doc.info.meta.clone(),
            version: job.version.clone(),
            has_text: true,
        };
        match judge(&connector.credentials, &source, &mut content, None) {
            Judgement::HoldBack(why) => {
                tracing::info!(connector = %connector.name, doc = %job.doc_id, "held back after OCR: {why}");
                self.hold_back_indexed(connector, &job.doc_id, why)?;
                Ok(false)
            }
            Judgement::Index { redacted } => {
                doc.text = content.text;
                doc.page_starts = content.page_starts;
                doc.metadata = content.metadata;
                doc.embedding = None;
                self.index.revise(vec![pending])?;
                Ok(redacted)
            }
        }
    }
}
