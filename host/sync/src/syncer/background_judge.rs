//! The background judge's work on the syncer: documents whose original file was never judged
//! (indexed by an older Quarry, or whose images OCR has since read) have it judged a few at a
//! time, newest first, as a sync judges a file. Until then their file is not served.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use quarry_core::{ConnectorId, DocMeta, ExtractedText, SourceDoc};
use quarry_runtime::{Grant, Session};
use quarry_store::{Connector, NO_TEXT_FOUND_BY_OCR, Original, PendingOriginal, now_ms};

use super::{Syncer, UNREAD, judge_original};
use crate::SyncError;
use crate::credentials::{Judgement, judge};

/// Documents taken from the store at a time.
const PER_ROUND: u32 = 16;

impl Syncer {
    /// Judges the originals of the next few documents waiting for it. `false` when none waits.
    /// A stop ends the round; what was judged is kept.
    pub fn judge_next_originals(&self, stop: &AtomicBool) -> Result<bool, SyncError> {
        let pending = self.block(self.store.pending_originals(PER_ROUND))?;
        if pending.is_empty() {
            return Ok(false);
        }
        let mut sessions: HashMap<ConnectorId, Result<(Connector, Session), String>> =
            HashMap::new();
        let mut outcome = Ok(true);
        for doc in &pending {
            if !sessions.contains_key(&doc.connector) {
                let opened = self.judging_session(&doc.connector)?;
                sessions.insert(doc.connector.clone(), opened);
            }
            let judged = match sessions.get_mut(&doc.connector) {
                Some(Ok((connector, session))) => self.judge_pending(connector, session, doc, stop),
                Some(Err(why)) => self
                    .block(
                        self.store
                            .set_original(doc, &Original::Unjudged(why.clone())),
                    )
                    .map(drop),
                None => Ok(()),
            };
            match judged {
                Ok(()) => {}
                Err(SyncError::Stopped) => break,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        for (connector, session) in sessions.into_values().flatten() {
            self.record_usage(&connector, &session);
        }
        outcome
    }

    /// A session of `id`'s plugin, or why its files cannot be read (for the user).
    fn judging_session(
        &self,
        id: &ConnectorId,
    ) -> Result<Result<(Connector, Session), String>, SyncError> {
        let Some(connector) = self.block(self.store.connector(id))? else {
            return Ok(Err(
                "could not be checked for credentials: its connector is gone".into(),
            ));
        };
        let Some(plugin) = self.plugins.get(&connector.plugin_id) else {
            let missing = SyncError::PluginMissing(connector.plugin_id.clone());
            return Ok(Err(format!(
                "could not be checked for credentials: {missing}"
            )));
        };
        let grant = Grant::from_stored(&connector.grant.dirs, &connector.grant.hosts);
        Ok(match plugin.session(&connector.config, &grant, None) {
            Ok(session) => Ok((connector, session)),
            Err(e) => Err(format!(
                "could not be read to check it for credentials: {e}"
            )),
        })
    }

    /// Judges one document's original and records the verdict: a document that holds a
    /// credential leaves the index (or, under a redacting connector, is fetched again by a sync,
    /// which redacts it); a file that changed while it was read is fetched again too.
    fn judge_pending(
        &self,
        connector: &Connector,
        session: &mut Session,
        doc: &PendingOriginal,
        stop: &AtomicBool,
    ) -> Result<(), SyncError> {
        let source = SourceDoc {
            id: doc.doc_id.clone(),
            locator: doc.locator.clone(),
            meta: DocMeta {
                title: doc.path.rsplit('/').next().unwrap_or(&doc.path).to_owned(),
                path: Some(doc.path.clone()),
                ..DocMeta::default()
            },
            version: doc.version.clone(),
            has_text: true,
        };
        let stored = self.index.document(&connector.id, &doc.doc_id)?;
        let mut content = stored.map_or_else(ExtractedText::default, |d| ExtractedText {
            text: d.text,
            page_starts: d.page_starts,
            metadata: d.metadata,
        });
        let verdict = judge_original(connector, session, &source, &content.text, stop)?;
        if verdict.found() {
            match judge(
                &connector.credentials,
                &source,
                &mut content,
                Some(&verdict),
            ) {
                Judgement::HoldBack(why) => {
                    tracing::info!(connector = %connector.name, doc = %doc.doc_id, "held back: {why}");
                    self.hold_back_indexed(connector, &doc.doc_id, why)?;
                }
                Judgement::Index { .. } => self.fetch_again(connector, doc)?,
            }
            return Ok(());
        }
        let mut original = verdict.original;
        let unread = doc
            .no_text
            .as_deref()
            .is_some_and(|n| n != NO_TEXT_FOUND_BY_OCR);
        if unread && matches!(original, Original::Judged(_)) {
            original = Original::Unjudged(UNREAD.to_owned());
        }
        self.block(self.store.set_original(doc, &original))?;
        if verdict.changed {
            self.fetch_again(connector, doc)?;
        }
        Ok(())
    }

    /// Makes the next sync fetch `doc` again, and asks for that sync.
    fn fetch_again(&self, connector: &Connector, doc: &PendingOriginal) -> Result<(), SyncError> {
        self.block(
            self.store
                .refetch(&connector.id, std::slice::from_ref(&doc.doc_id)),
        )?;
        self.block(self.store.request_sync(&connector.id, now_ms()))
    }
}
