//! One sync of one connector: list through the plugin in batches, fetch the text of what changed,
//! write the index, then commit the batch and its checkpoint to the catalog.
//!
//! The order makes a sync resumable and crash-safe: the catalog (and with it the checkpoint) only
//! moves after the index holds the batch, so a crash re-does at most one batch, and re-doing a
//! batch is harmless (documents are replaced by id). A full listing's last batch also removes the
//! documents that listing did not see, from the index first, then from the catalog.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

use quarry_core::{ConnectorId, Coverage, DocId, ExtractedText, SourceBatch, SourceDoc};
use quarry_index::{DocInfo, IndexDoc, SearchIndex, WriteBatch};
use quarry_runtime::{
    Grant, GuestError, PluginSet, Progress, ProgressFn, RuntimeError, Session, ToFetch, Usage,
};
use quarry_store::{
    CatalogDoc, CommitBatch, Connector, ConnectorStatus, OcrRequest, Original, PluginUsage, Store,
    SyncProgress, now_ms,
};
use tokio::runtime::Handle;

use crate::SyncError;
use crate::credentials::{self, Judgement, OriginalVerdict, judge};
use crate::originals::{self, FileRef};
use crate::scan_text;

mod background_judge;
mod scans;

/// Extracted text held before it is written to the index, at most.
const FLUSH_TEXT_BYTES: usize = 32 << 20;

/// How often the counts of a running sync are written for the API and the CLI.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// What a finished sync did: documents listed by its (last) listing, and what it wrote, from
/// where a resumed listing started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Batches listed.
    pub batches: u64,
    /// Documents listed.
    pub listed: u64,
    /// New or changed documents indexed.
    pub indexed: u64,
    /// Documents whose text could not be extracted (indexed by title and path).
    pub failed: u64,
    /// Documents held back from the index (credentials, links to Quarry's own data).
    pub held_back: u64,
    /// Documents removed.
    pub deleted: u64,
}

/// Syncs connectors. Its methods block: call them from a blocking thread.
pub struct Syncer {
    store: Store,
    index: Arc<SearchIndex>,
    plugins: PluginSet,
    runtime: Handle,
    /// Threads woken when a batch is committed to the store (the OCR queue, which reads what a
    /// batch queued: the index's commit comes before the store's, too early for it).
    woken_on_batch: Mutex<Vec<Thread>>,
}

impl Syncer {
    /// A syncer over the store, the (writable) index and the installed plugins. `runtime` runs
    /// the store's queries.
    pub fn new(
        store: Store,
        index: Arc<SearchIndex>,
        plugins: PluginSet,
        runtime: Handle,
    ) -> Syncer {
        Syncer {
            store,
            index,
            plugins,
            runtime,
            woken_on_batch: Mutex::new(Vec::new()),
        }
    }

    /// Wakes `thread` (unparks it) whenever a sync commits a batch to the store.
    pub fn wake_on_batch(&self, thread: Thread) {
        self.woken_on_batch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(thread);
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The installed plugins.
    pub fn plugins(&self) -> &PluginSet {
        &self.plugins
    }

    /// Syncs a connector, resuming where its last sync stopped. Marks it `syncing` while it
    /// runs, then `idle`, or `error` with the reason. `stop` ends it at the next document (the
    /// next sync resumes at the batch it was in).
    pub fn sync(&self, id: &ConnectorId, stop: &AtomicBool) -> Result<SyncReport, SyncError> {
        self.sync_with(id, None, stop)
    }

    /// Syncs what changed at `changed` (host paths a file watcher saw change): when the plugin
    /// can list what changed at given paths (WIT 0.2.0), only those are looked at; otherwise,
    /// or when the connector's state asks for more (a listing half-way, a full listing or a
    /// sync requested, a folder gone that held documents), this is [`Syncer::sync`].
    pub fn sync_changes(
        &self,
        id: &ConnectorId,
        changed: &[PathBuf],
        stop: &AtomicBool,
    ) -> Result<SyncReport, SyncError> {
        self.sync_with(id, Some(changed), stop)
    }

    fn sync_with(
        &self,
        id: &ConnectorId,
        changed: Option<&[PathBuf]>,
        stop: &AtomicBool,
    ) -> Result<SyncReport, SyncError> {
        let connector = self
            .block(self.store.connector(id))?
            .ok_or(SyncError::Gone)?;
        if connector.status == ConnectorStatus::Disabled {
            return Ok(SyncReport::default());
        }
        let settled = connector.listing.checkpoint.is_some()
            && !connector.listing.more
            && !connector.schedule.full_requested
            && connector.schedule.sync_requested_ms.is_none();
        let changed = changed.filter(|_| settled);
        self.block(self.store.sync_started(id))?;
        match changed {
            Some(paths) => {
                tracing::debug!(connector = %connector.name, paths = paths.len(), "sync of changes started");
            }
            None => tracing::info!(connector = %connector.name, "sync started"),
        }
        let result = self.run(&connector, changed, stop);
        let error = match &result {
            Ok(report) => {
                tracing::info!(connector = %connector.name, ?report, "sync finished");
                None
            }
            Err(SyncError::Stopped) => None,
            Err(e) => {
                tracing::warn!(connector = %connector.name, "sync failed: {e}");
                Some(e.failure())
            }
        };
        if !matches!(result, Err(SyncError::Gone)) {
            self.block(self.store.sync_finished(id, error.as_ref(), now_ms()))?;
        }
        result
    }

    /// Removes a removed connector's documents from the index, then its rows from the store.
    pub fn purge(&self, id: &ConnectorId) -> Result<(), SyncError> {
        self.index.write(WriteBatch {
            purge_connectors: vec![id.clone()],
            ..WriteBatch::default()
        })?;
        self.block(self.store.purge_connector(id))?;
        Ok(())
    }

    fn run(
        &self,
        connector: &Connector,
        changed: Option<&[PathBuf]>,
        stop: &AtomicBool,
    ) -> Result<SyncReport, SyncError> {
        let plugin = self
            .plugins
            .get(&connector.plugin_id)
            .ok_or_else(|| SyncError::PluginMissing(connector.plugin_id.clone()))?;
        let grant = Grant::from_stored(&connector.grant.dirs, &connector.grant.hosts);
        let name = connector.name.clone();
        let progress: ProgressFn = Arc::new(move |p: Progress| {
            tracing::debug!(connector = %name, done = p.done, total = ?p.total, "{}", p.message);
        });
        let mut session = plugin.session(&connector.config, &grant, Some(progress))?;
        let result = match changed {
            Some(changed) => match self.changes(connector, &mut session, changed, stop) {
                Ok(Some(report)) => Ok(report),
                Ok(None) => self.listings(connector, &mut session, stop),
                Err(e) => Err(e),
            },
            None => self.listings(connector, &mut session, stop),
        };
        self.record_usage(connector, &session);
        result
    }

    /// Runs listings until the source has nothing more (see `run`).
    fn listings(
        &self,
        connector: &Connector,
        session: &mut Session,
        stop: &AtomicBool,
    ) -> Result<SyncReport, SyncError> {
        // A full listing asked for starts from scratch, unless a listing is half-way: that one
        // goes on (it may be full already; if not, the request stays for the next sync).
        let from_scratch = connector.schedule.full_requested && !connector.listing.more;
        let mut listing = Listing {
            checkpoint: connector
                .listing
                .checkpoint
                .clone()
                .filter(|_| !from_scratch),
            more: connector.listing.more,
            generation: connector.listing.generation,
            unlisted: None,
            unswept: false,
            committing: None,
        };
        // A resumed listing goes on counting from where it stopped; a new one counts from zero.
        let mut report = SyncReport::default();
        if connector.listing.more {
            report.listed = connector.progress.listed;
            report.indexed = connector.progress.indexed;
            report.failed = connector.progress.failed;
        }
        let listed = self.list_until_done(connector, session, &mut listing, &mut report, stop);
        // The last batch's commit is done before the sync ends, whichever way: what was
        // written stays written, and a failure that stopped the sync is the one told.
        let settled = self.settle(&mut listing);
        first_failure(connector, listed, settled).map(|()| report)
    }

    /// Lists batch after batch until the source has nothing more.
    fn list_until_done(
        &self,
        connector: &Connector,
        session: &mut Session,
        listing: &mut Listing,
        report: &mut SyncReport,
        stop: &AtomicBool,
    ) -> Result<(), SyncError> {
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(SyncError::Stopped);
            }
            if self.block(self.store.connector(&connector.id))?.is_none() {
                return Err(SyncError::Gone);
            }
            if !listing.more {
                // A new listing: `listed` (and with it `remaining`) counts the listing in
                // progress; what was written counts for the whole sync.
                report.listed = 0;
            }
            let more = self.batch(connector, session, listing, report, stop)?;
            if !more && listing.unswept {
                // A full listing resumed from a stored checkpoint has not seen what changed, while
                // it was stopped, in the part it had already listed, nor can it tell what
                // vanished: list everything once more (unchanged documents cost only their
                // listing).
                listing.unswept = false;
                listing.checkpoint = None;
                continue;
            }
            if !more {
                return Ok(());
            }
        }
    }

    /// Indexes what changed at `changed` (host paths) as the plugin lists it (`list-changes`),
    /// leaving the connector's listing where it was. `None` when that cannot be done and a
    /// listing is needed: the plugin cannot tell (or fails), or a path that is gone held
    /// documents (a folder moved away: its files are not among the paths).
    fn changes(
        &self,
        connector: &Connector,
        session: &mut Session,
        changed: &[PathBuf],
        stop: &AtomicBool,
    ) -> Result<Option<SyncReport>, SyncError> {
        let mut report = SyncReport::default();
        let hints = session.change_hints(changed);
        if hints.is_empty() {
            return Ok(Some(report));
        }
        if self.gone_with_documents(connector, changed)? {
            return Ok(None);
        }
        let batches = match session.list_changes(&hints) {
            Ok(Some(batches)) => batches,
            Ok(None) => return Ok(None),
            Err(e) => {
                // The listing that follows finds the changes, or fails with the reason.
                tracing::warn!(connector = %connector.name, "listing the changes failed, listing everything: {e}");
                return Ok(None);
            }
        };
        let checkpoint = connector.listing.checkpoint.clone().unwrap_or_default();
        let mut listing = Listing {
            checkpoint: Some(checkpoint.clone()),
            more: false,
            generation: connector.listing.generation,
            unlisted: None,
            unswept: false,
            committing: None,
        };
        let written = batches.into_iter().try_for_each(|mut batch| {
            // The listing stays where it was: this batch does not move it.
            batch.checkpoint = checkpoint.clone();
            self.write_batch(connector, session, batch, &mut listing, &mut report, stop)
                .map(|_| ())
        });
        let settled = self.settle(&mut listing);
        first_failure(connector, written, settled)?;
        Ok(Some(report))
    }

    /// True when one of `changed` (host paths) is gone and documents of the connector lay
    /// under it (by their path relative to the granted folder).
    fn gone_with_documents(
        &self,
        connector: &Connector,
        changed: &[PathBuf],
    ) -> Result<bool, SyncError> {
        for path in changed {
            if path.symlink_metadata().is_ok() {
                continue;
            }
            for dir in connector.grant.dirs.values() {
                let Some(rel) = path.strip_prefix(dir).ok().and_then(|r| r.to_str()) else {
                    continue;
                };
                if !rel.is_empty()
                    && self.block(self.store.has_documents_under(&connector.id, rel))?
                {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Lists, indexes and commits one batch; returns whether the listing goes on.
    fn batch(
        &self,
        connector: &Connector,
        session: &mut Session,
        listing: &mut Listing,
        report: &mut SyncReport,
        stop: &AtomicBool,
    ) -> Result<bool, SyncError> {
        let batch = session.list_docs(listing.checkpoint.as_deref())?;
        self.write_batch(connector, session, batch, listing, report, stop)
    }

    /// Indexes and commits a listed batch; returns whether the listing goes on.
    fn write_batch(
        &self,
        connector: &Connector,
        session: &mut Session,
        batch: SourceBatch,
        listing: &mut Listing,
        report: &mut SyncReport,
        stop: &AtomicBool,
    ) -> Result<bool, SyncError> {
        report.batches += 1;
        // The catalog's writes run beside the plugin's calls (two cores, not one after the
        // other), in order: the previous batch's commit is done before this batch is planned
        // against the catalog.
        self.settle(listing)?;
        let (mut commit, changed) = self.plan(connector, batch, listing, report)?;
        self.fetch_and_write(connector, session, changed, &mut commit, report, stop)?;
        commit.progress = report.progress();
        listing.checkpoint = Some(commit.checkpoint.clone());
        listing.more = commit.more;
        listing.generation = commit.generation;
        let (store, id) = (self.store.clone(), connector.id.clone());
        listing.committing = Some(
            self.runtime
                .spawn(async move { store.commit_batch(&id, &commit, now_ms()).await }),
        );
        Ok(listing.more)
    }

    /// Waits for the catalog's intents of the batch held, if they are still being written.
    fn ready(&self, held: &mut Held) -> Result<(), SyncError> {
        match held.prepared.take() {
            Some(prepared) => self.joined(prepared),
            None => Ok(()),
        }
    }

    /// Waits for the catalog's commit of the last batch, if it is still being written, and
    /// wakes those waiting for batches.
    fn settle(&self, listing: &mut Listing) -> Result<(), SyncError> {
        let Some(committing) = listing.committing.take() else {
            return Ok(());
        };
        self.joined(committing)?;
        for thread in self
            .woken_on_batch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            thread.unpark();
        }
        Ok(())
    }

    /// The answer of a catalog write made beside the sync.
    fn joined(&self, write: CatalogWrite) -> Result<(), SyncError> {
        match self.runtime.block_on(write) {
            Ok(written) => Ok(written?),
            Err(e) => Err(SyncError::CatalogWrite(e.to_string())),
        }
    }

    /// What a listed batch changes: the commit it will make (generation, deletions) and the
    /// documents whose version is new, to fetch. A full listing's first batch loads every known
    /// version; its last batch deletes what it did not list.
    fn plan(
        &self,
        connector: &Connector,
        batch: SourceBatch,
        listing: &mut Listing,
        report: &mut SyncReport,
    ) -> Result<(CommitBatch, Vec<SourceDoc>), SyncError> {
        let starts_full = !listing.more && batch.coverage == Coverage::Full;
        let ends_full = batch.coverage == Coverage::Full && !batch.more;
        if starts_full {
            listing.unlisted = Some(self.block(self.store.all_versions(&connector.id))?);
        }
        // A listing of changes, or a full one resumed, looks its batch's versions up.
        let batch_versions = match listing.unlisted {
            Some(_) => HashMap::new(),
            None => {
                let ids: Vec<DocId> = batch.upserts.iter().map(|d| d.id.clone()).collect();
                self.block(self.store.catalog_versions(&connector.id, &ids))?
            }
        };
        let mut commit = CommitBatch {
            generation: listing.generation + i64::from(starts_full),
            checkpoint: batch.checkpoint,
            more: batch.more,
            starts_full,
            ends_full,
            deleted: batch.deletes,
            ..CommitBatch::default()
        };
        let mut changed = Vec::new();
        for doc in batch.upserts {
            report.listed += 1;
            let known = match &mut listing.unlisted {
                Some(unlisted) => unlisted.remove(&doc.id),
                None => batch_versions.get(&doc.id).cloned(),
            };
            if !known.is_some_and(|v| !v.is_empty() && v == doc.version) {
                changed.push(doc);
            }
        }
        if ends_full {
            // What a full listing begun in this run did not list is gone. A resumed one cannot
            // tell; a fresh listing follows it (see `run`).
            match listing.unlisted.take() {
                Some(unlisted) => commit.deleted.extend(unlisted.into_keys()),
                None => listing.unswept = true,
            }
        }
        report.deleted += commit.deleted.len() as u64;
        Ok((commit, changed))
    }

    /// Fetches the changed documents and writes them (and the batch's deletions) to the index,
    /// flushing early to bound memory; progress is recorded as it goes. Write-ahead: the catalog
    /// learns what the index is about to get before it gets it (its intents are written beside
    /// the first fetches, and awaited before the index is written).
    fn fetch_and_write(
        &self,
        connector: &Connector,
        session: &mut Session,
        changed: Vec<SourceDoc>,
        commit: &mut CommitBatch,
        report: &mut SyncReport,
        stop: &AtomicBool,
    ) -> Result<(), SyncError> {
        let intents: Vec<CatalogDoc> = changed.iter().map(catalog_doc).collect();
        let (store, id, deleted) = (
            self.store.clone(),
            connector.id.clone(),
            commit.deleted.clone(),
        );
        let mut held = Held {
            prepared: Some(self.runtime.spawn(async move {
                store.prepare_batch(&id, &intents, &deleted, now_ms()).await
            })),
            ..Held::default()
        };
        // Whichever way the fetches end, the catalog's intents are written before this returns
        // (a stop, a failed judgement): no write of the batch outlives its sync.
        let fetched = (|| -> Result<(), SyncError> {
            let (with_text, without_text): (Vec<SourceDoc>, Vec<SourceDoc>) =
                changed.into_iter().partition(|doc| doc.has_text);
            for doc in without_text {
                let original = judge_original(connector, session, &doc, "", stop)?;
                let entry = self.entry(connector, doc, None, Some(original), report);
                self.hold(&mut held, connector, entry, commit)?;
            }
            let wanted: Vec<ToFetch<'_>> = with_text.iter().map(ToFetch::from).collect();
            let mut reported = Instant::now();
            let mut done = 0;
            while done < wanted.len() {
                // A few documents at a time (one call for a run of small ones): the texts held
                // stay bounded, and a stop is seen soon.
                let texts = session.fetch_some(&wanted[done..]);
                let took = texts.len().max(1);
                // Files the sandbox refused as Quarry's own (a hard link to one in the folder).
                let refused = session.take_refused_own();
                for (doc, text) in with_text[done..].iter().zip(texts) {
                    let own = text.is_err() && refused.iter().any(|path| names(doc, path));
                    let original = if own {
                        None
                    } else {
                        let fetched = text.as_ref().map_or("", |t| t.text.as_str());
                        Some(judge_original(connector, session, doc, fetched, stop)?)
                    };
                    let entry = self.entry(connector, doc.clone(), Some(text), original, report);
                    self.hold(&mut held, connector, entry, commit)?;
                }
                done += took;
                if stop.load(Ordering::Relaxed) {
                    // Safe at any document: the catalog marked the batch to be fetched again.
                    return Err(SyncError::Stopped);
                }
                if reported.elapsed() >= PROGRESS_EVERY {
                    self.block(self.store.sync_progress(&connector.id, report.progress()))?;
                    reported = Instant::now();
                }
            }
            Ok(())
        })();
        let prepared = self.ready(&mut held);
        first_failure(connector, fetched, prepared)?;
        let mut deletes = std::mem::take(&mut held.removed);
        deletes.extend(
            commit
                .deleted
                .iter()
                .map(|d| (connector.id.clone(), d.clone())),
        );
        self.write(WriteBatch {
            upserts: held.docs,
            deletes,
            ..WriteBatch::default()
        })
    }

    /// Holds a judged document for the index (or its removal from it, when held back) and its
    /// catalog entry for the commit, writing what is held once its texts pass
    /// [`FLUSH_TEXT_BYTES`]: bounded memory, and progress users can see (the catalog still waits
    /// for the batch).
    fn hold(
        &self,
        held: &mut Held,
        connector: &Connector,
        entry: Entry,
        commit: &mut CommitBatch,
    ) -> Result<(), SyncError> {
        let Entry {
            index: index_doc,
            catalog: catalog_doc,
            ocr,
        } = entry;
        commit.ocr.extend(ocr);
        match index_doc {
            Some(index_doc) => {
                held.bytes += index_doc.text.len();
                held.docs.push(index_doc);
            }
            // An older version may be in the index: it goes.
            None => held
                .removed
                .push((connector.id.clone(), catalog_doc.doc_id.clone())),
        }
        commit.changed.push(catalog_doc);
        if held.bytes > FLUSH_TEXT_BYTES {
            self.ready(held)?;
            self.write(WriteBatch {
                upserts: std::mem::take(&mut held.docs),
                deletes: std::mem::take(&mut held.removed),
                ..WriteBatch::default()
            })?;
            held.bytes = 0;
        }
        Ok(())
    }

    /// Adds what `session`'s plugin calls cost to `connector`'s totals (a failure is logged).
    fn record_usage(&self, connector: &Connector, session: &Session) {
        let usage = plugin_usage(&session.usage());
        if let Err(e) = self.block(self.store.add_plugin_usage(&connector.id, &usage)) {
            tracing::warn!(connector = %connector.name, "cannot record the plugin's usage: {e}");
        }
    }

    /// Takes an indexed document out of the index, then marks it held back (`why`) in the
    /// catalog: a crash in between leaves it out of the index.
    fn hold_back_indexed(
        &self,
        connector: &Connector,
        doc: &DocId,
        why: String,
    ) -> Result<(), SyncError> {
        self.write(WriteBatch {
            deletes: vec![(connector.id.clone(), doc.clone())],
            ..WriteBatch::default()
        })?;
        self.block(self.store.hold_back(&connector.id, &[(doc.clone(), why)]))
    }

    /// Writes a batch to the index (without vectors: the embedding queue adds them).
    fn write(&self, batch: WriteBatch) -> Result<(), SyncError> {
        Ok(self.index.write(batch)?)
    }

    /// A changed document's entries for the index and the catalog, with its text as fetched
    /// (`None` when it has none), judged for credentials: a document held back has no entry for
    /// the index. A document whose text could not be extracted is still indexed by its title and
    /// path, with the reason kept; it is retried when its version changes, or at the next sync
    /// if the source was only unavailable. `original` is what judging its file found; `None`
    /// when the sandbox refused its file as one of Quarry's own (a hard link to it): it is left
    /// out.
    fn entry(
        &self,
        connector: &Connector,
        doc: SourceDoc,
        fetched: Option<Result<ExtractedText, RuntimeError>>,
        original: Option<OriginalVerdict>,
        report: &mut SyncReport,
    ) -> Entry {
        report.indexed += 1;
        let own = original.is_none();
        let mut version = doc.version.clone();
        if original.as_ref().is_some_and(|o| o.changed) {
            // Its text may be of another version than the file judged.
            version.clear();
        }
        let (mut content, error) = match fetched {
            None => (ExtractedText::default(), None),
            Some(Ok(content)) => (content, None),
            Some(Err(_)) if own => (ExtractedText::default(), None),
            Some(Err(e)) => {
                report.failed += 1;
                tracing::info!(connector = %connector.name, doc = %doc.id, "text not extracted: {e}");
                if matches!(e.guest_error(), Some(GuestError::Unavailable(_))) {
                    version.clear();
                }
                (ExtractedText::default(), Some(e.to_string()))
            }
        };
        let ocr = if error.is_none() && !own {
            self.scans(connector, &doc, &version, &mut content)
        } else {
            None
        };
        let judgement = if own {
            Judgement::HoldBack(LEFT_OUT_OWN.to_owned())
        } else {
            judge(
                &connector.credentials,
                &doc,
                &mut content,
                original.as_ref(),
            )
        };
        let without_text = no_text(&doc, &content);
        let mut original = original.map(|o| o.original).unwrap_or_default();
        if without_text.is_some() && matches!(original, Original::Judged(_)) {
            // Its bytes hold no secret, but what its images show was not read.
            original = Original::Unjudged(if ocr.is_some() {
                UNREAD_WAITING.to_owned()
            } else {
                UNREAD.to_owned()
            });
        }
        let mut catalog_doc = CatalogDoc {
            doc_id: doc.id.clone(),
            locator: doc.locator,
            version,
            meta: doc.meta.clone(),
            has_text: doc.has_text,
            error,
            no_text: without_text,
            held_back: None,
            redacted: false,
            original,
        };
        match judgement {
            Judgement::HoldBack(why) => {
                report.held_back += 1;
                tracing::info!(connector = %connector.name, doc = %doc.id, "held back: {why}");
                catalog_doc.held_back = Some(why);
                catalog_doc.error = None;
                catalog_doc.no_text = None;
                Entry {
                    index: None,
                    catalog: catalog_doc,
                    ocr: None,
                }
            }
            Judgement::Index { redacted } => {
                catalog_doc.redacted = redacted;
                let index_doc = IndexDoc {
                    info: DocInfo {
                        connector: connector.id.clone(),
                        doc_id: doc.id,
                        meta: doc.meta,
                    },
                    text: content.text,
                    page_starts: content.page_starts,
                    metadata: content.metadata,
                    embedding: None,
                };
                Entry {
                    index: Some(index_doc),
                    catalog: catalog_doc,
                    ocr,
                }
            }
        }
    }

    /// OCR for `doc` at `version`, when its connector's plugin reads scans and pages of it
    /// have no text: the text read earlier for this version put in `content` (an unchanged
    /// file is never read twice), or else the request to read them.
    fn scans(
        &self,
        connector: &Connector,
        doc: &SourceDoc,
        version: &str,
        content: &mut ExtractedText,
    ) -> Option<OcrRequest> {
        let plugin = self.plugins.get(&connector.plugin_id)?;
        let models = plugin.ocr_models()?;
        let mut pages = scan_text::pages_to_read(doc, content);
        if pages.is_empty() || version.is_empty() {
            return None;
        }
        pages.truncate(scan_text::MAX_OCR_PAGES);
        let kept = self.store.kept_ocr(&connector.id, &doc.id, version, models);
        match self.block(kept) {
            Ok(Some(read)) => {
                scan_text::merge(content, &read);
                return None;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(connector = %connector.name, "cannot read kept OCR text: {e}"),
        }
        Some(OcrRequest {
            doc_id: doc.id.clone(),
            version: version.to_owned(),
            update_time_ms: doc.meta.update_time_ms,
            pages,
            models: models.to_owned(),
        })
    }

    pub(crate) fn block<T, E>(
        &self,
        future: impl Future<Output = Result<T, E>>,
    ) -> Result<T, SyncError>
    where
        SyncError: From<E>,
    {
        Ok(self.runtime.block_on(future)?)
    }
}

impl SyncReport {
    fn progress(&self) -> SyncProgress {
        SyncProgress {
            listed: self.listed,
            indexed: self.indexed,
            failed: self.failed,
            remaining: None,
        }
    }
}

/// A session's cost as the store keeps it.
pub fn plugin_usage(usage: &Usage) -> PluginUsage {
    PluginUsage {
        calls: usage.calls,
        failed_calls: usage.failed_calls,
        cpu_us: u64::try_from(usage.cpu.as_micros()).unwrap_or(u64::MAX),
        peak_memory_bytes: usage.peak_memory_bytes,
        network_bytes: usage.network_bytes,
    }
}

/// The catalog's entry for a document as listed, before its text is fetched.
fn catalog_doc(doc: &SourceDoc) -> CatalogDoc {
    CatalogDoc {
        doc_id: doc.id.clone(),
        locator: doc.locator.clone(),
        version: String::new(),
        meta: doc.meta.clone(),
        has_text: doc.has_text,
        error: None,
        no_text: None,
        held_back: None,
        redacted: false,
        original: Original::Pending,
    }
}

/// Judges `doc`'s original file (`text` is its text as fetched, already judged): every byte,
/// when the connector checks it; else only whether it is a copy of Quarry's database.
fn judge_original(
    connector: &Connector,
    session: &mut Session,
    doc: &SourceDoc,
    text: &str,
    stop: &AtomicBool,
) -> Result<OriginalVerdict, SyncError> {
    let file = FileRef {
        id: &doc.id,
        locator: &doc.locator,
        path: credentials::shown_path(doc),
    };
    if credentials::checks(&connector.credentials, doc) {
        originals::judge(session, file, text, stop)
    } else {
        Ok(originals::header(session, file))
    }
}

/// The outcome of work followed by a catalog write it waited for (`then`): the work's failure
/// if it failed (the write's, if it failed too, is logged), else the write's.
fn first_failure<T>(
    connector: &Connector,
    work: Result<T, SyncError>,
    then: Result<(), SyncError>,
) -> Result<T, SyncError> {
    match (work, then) {
        (Err(e), Err(also)) => {
            tracing::warn!(connector = %connector.name, "{also}");
            Err(e)
        }
        (Err(e), Ok(())) => Err(e),
        (Ok(_), Err(e)) => Err(e),
        (Ok(done), Ok(())) => Ok(done),
    }
}

/// Why the file of an image or a scan whose text waits for OCR is not served yet.
const UNREAD_WAITING: &str =
    "not checked for credentials yet: the text its images show waits for OCR";
/// Why the file of an image or a scan whose text was not read is not served.
const UNREAD: &str = "could not be checked for credentials: the text its images show was not read";

/// Why a document whose file the sandbox refused as one of Quarry's own is held back.
const LEFT_OUT_OWN: &str = "left out: a link to one of Quarry's own files";

/// Whether `path` (a file the sandbox refused, relative to its granted folder) is `doc`'s file:
/// its locator or its path names it.
fn names(doc: &SourceDoc, path: &str) -> bool {
    doc.locator == path || doc.meta.path.as_deref() == Some(path)
}

/// The metadata key a connector sets on a document with no text layer (a scanned PDF), its
/// value saying why.
const NO_TEXT_LAYER: &str = "no_text_layer";

/// Why `doc` has no text though it may hold some, for `connector status`: what its connector
/// says ([`NO_TEXT_LAYER`]), or, for an image without text, that it is one. Nothing reads text
/// from images yet, so both are found by name only.
fn no_text(doc: &SourceDoc, content: &ExtractedText) -> Option<String> {
    if let Some((_, why)) = content.metadata.iter().find(|(k, _)| k == NO_TEXT_LAYER) {
        return Some(why.clone());
    }
    let image = doc.meta.mime_type.starts_with("image/") && doc.meta.mime_type != "image/svg+xml";
    (image && content.text.trim().is_empty())
        .then(|| "an image: no text layer, found by name only".to_owned())
}

/// A changed document's entries: for the index (none when held back), for the catalog, and
/// for the OCR queue (when pages of it wait to be read).
struct Entry {
    index: Option<IndexDoc>,
    catalog: CatalogDoc,
    ocr: Option<OcrRequest>,
}

/// Fetched documents not yet written to the index, the bytes of their texts, and held-back
/// documents to remove from it.
#[derive(Default)]
struct Held {
    docs: Vec<IndexDoc>,
    bytes: usize,
    removed: Vec<(ConnectorId, DocId)>,
    /// The catalog's intents for the batch, while they are being written: the index is written
    /// only once they are.
    prepared: Option<CatalogWrite>,
}

/// Where the connector's listing stands.
struct Listing {
    checkpoint: Option<String>,
    more: bool,
    generation: i64,
    /// For a full listing begun in this run: the catalog's documents it has not listed yet,
    /// with their versions (about 100 bytes each). `None` for a listing of changes, or one
    /// resumed from a stored checkpoint, whose start this run did not see.
    unlisted: Option<HashMap<DocId, String>>,
    /// True when a resumed full listing ended without knowing what it did not list.
    unswept: bool,
    /// The catalog's commit of the last batch, while it is being written.
    committing: Option<CatalogWrite>,
}

/// A write to the catalog made beside the sync (on the store's runtime).
type CatalogWrite = tokio::task::JoinHandle<Result<(), quarry_store::StoreError>>;
