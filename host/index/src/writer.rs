//! The one writer of the index: a thread that owns tantivy's `IndexWriter`, applies the batches
//! sent to it, and commits. Batches that arrive while it commits are committed together. A batch
//! is acknowledged only once it is committed and visible to searches.
//!
//! Vectors computed in the background ([`Pending`]) are written here too, and only over the
//! version of the document they were computed from: one written since (or deleted) keeps its
//! place in the queue instead.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use quarry_core::{ConnectorId, DocId};
use tantivy::{IndexReader, IndexWriter, Term};

use crate::IndexError;
use crate::document::{IndexDoc, key};
use crate::pending::{Pending, current_revision};
use crate::schema::Fields;
use crate::team_log::{Applied, decode, encode};
use quarry_core::team_log::{LogChange, LogEntry};

/// Batches committed together at most.
const MAX_GROUP: usize = 64;

/// Changes to apply in one commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    /// Documents to add or replace.
    pub upserts: Vec<IndexDoc>,
    /// Documents to remove.
    pub deletes: Vec<(ConnectorId, DocId)>,
    /// Connectors whose every document is removed.
    pub purge_connectors: Vec<ConnectorId>,
}

impl WriteBatch {
    /// True when the batch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deletes.is_empty() && self.purge_connectors.is_empty()
    }
}

/// The log's changes that make `batch`.
pub(crate) fn batch_changes(batch: WriteBatch) -> Vec<LogChange> {
    let purges = batch
        .purge_connectors
        .into_iter()
        .map(|connector| LogChange::Purge { connector });
    let deletes = batch
        .deletes
        .into_iter()
        .map(|(connector, doc)| LogChange::Delete { connector, doc });
    let puts = batch.upserts.into_iter().map(|doc| LogChange::Put {
        record: encode(&doc),
        connector: doc.info.connector,
        doc: doc.info.doc_id,
        over: None,
    });
    purges.chain(deletes).chain(puts).collect()
}

/// The log's changes that write `docs` over the versions they were read at.
pub(crate) fn revision_changes(docs: Vec<Pending>) -> Vec<LogChange> {
    docs.into_iter()
        .map(|pending| LogChange::Put {
            record: encode(&pending.doc),
            connector: pending.doc.info.connector,
            doc: pending.doc.info.doc_id,
            over: Some(pending.revision),
        })
        .collect()
}

/// What a job changes.
pub(crate) enum Change {
    /// Documents written or removed by a sync.
    Batch(WriteBatch),
    /// Vectors for documents as they were when read ([`Pending`]).
    Vectors(Vec<Pending>),
    /// Changes read from the team's log, applied in order, each document at its position.
    Follow(Follow),
}

/// Changes read from the team's log.
pub(crate) struct Follow {
    /// Whether the index is emptied first (it follows another team database, or one that went
    /// back in time).
    pub(crate) reset: bool,
    /// The documents, in the log's order.
    pub(crate) entries: Vec<LogEntry>,
    /// What the commit records as applied.
    pub(crate) applied: Applied,
}

struct Job {
    change: Change,
    done: SyncSender<Result<(), IndexError>>,
}

/// A handle to the writer thread.
pub(crate) struct Writer {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the writer thread, at background priority, and has it create tantivy's writer
    /// with `create` (so the threads tantivy starts share that priority).
    pub(crate) fn start(
        create: impl FnOnce() -> Result<IndexWriter, IndexError> + Send + 'static,
        reader: IndexReader,
        fields: Fields,
    ) -> Result<Writer, IndexError> {
        let (jobs, rx) = channel::<Job>();
        let (created, wait_created) = sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("quarry-index-writer".into())
            .spawn(move || {
                quarry_core::priority::run_in_background();
                match create() {
                    Ok(writer) => {
                        let _ = created.send(Ok(()));
                        run(writer, reader, fields, rx);
                    }
                    Err(e) => {
                        let _ = created.send(Err(e));
                    }
                }
            })
            .map_err(|e| IndexError::Io {
                what: "starting the index writer",
                source: Arc::new(e),
            })?;
        match wait_created.recv() {
            Ok(Ok(())) => Ok(Writer {
                jobs: Some(jobs),
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(IndexError::Closed)
            }
        }
    }

    /// Applies `change` and commits; returns once searches see it.
    pub(crate) fn write(&self, change: Change) -> Result<(), IndexError> {
        let (done, wait) = sync_channel(1);
        self.jobs
            .as_ref()
            .ok_or(IndexError::Closed)?
            .send(Job { change, done })
            .map_err(|_| IndexError::Closed)?;
        wait.recv().map_err(|_| IndexError::Closed)?
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the channel ends the thread once the jobs already sent are done.
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(mut writer: IndexWriter, reader: IndexReader, fields: Fields, rx: Receiver<Job>) {
    let mut revisions = Revisions::starting_now();
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let result = apply(&mut writer, &reader, &fields, &mut revisions, &group)
            .and_then(|()| commit(&mut writer, &group))
            .and_then(|()| reader.reload());
        let result = result.map_err(|e| {
            tracing::error!("index commit failed, rolled back: {e}");
            if let Err(e) = writer.rollback() {
                tracing::error!("index rollback failed: {e}");
            }
            IndexError::Tantivy(e)
        });
        for job in group {
            let _ = job.done.send(result.clone());
        }
    }
    if let Err(e) = writer.wait_merging_threads() {
        tracing::warn!("index merges did not finish: {e}");
    }
}

/// Commits, recording the last position of the team's log the group applied.
fn commit(writer: &mut IndexWriter, group: &[Job]) -> tantivy::Result<()> {
    let applied = group.iter().rev().find_map(|job| match &job.change {
        Change::Follow(follow) => Some(follow.applied.payload()),
        _ => None,
    });
    let mut prepared = writer.prepare_commit()?;
    if let Some(payload) = applied {
        prepared.set_payload(&payload);
    }
    prepared.commit().map(|_| ())
}

/// Deletes the document keyed `key` and the parts of its text.
fn delete(writer: &IndexWriter, f: &Fields, key: &str) {
    writer.delete_term(Term::from_field_text(f.key, key));
    writer.delete_term(Term::from_field_text(f.part_of, key));
}

/// The revisions the writer gives documents: strictly increasing within the process, and
/// starting from the clock (in nanoseconds), so above those of any earlier process.
struct Revisions(u64);

impl Revisions {
    fn starting_now() -> Revisions {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX / 2));
        Revisions(now)
    }

    fn next(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }
}

fn apply(
    writer: &mut IndexWriter,
    reader: &IndexReader,
    f: &Fields,
    revisions: &mut Revisions,
    group: &[Job],
) -> tantivy::Result<()> {
    // Documents changed earlier in this group, which the searcher does not see yet.
    let mut touched: HashSet<String> = HashSet::new();
    let mut purged: HashSet<&ConnectorId> = HashSet::new();
    for job in group {
        match &job.change {
            Change::Batch(batch) => {
                for connector in &batch.purge_connectors {
                    writer.delete_term(Term::from_field_text(f.connector, connector.as_str()));
                    writer.delete_term(Term::from_field_text(f.part_connector, connector.as_str()));
                    purged.insert(connector);
                }
                for (connector, doc) in &batch.deletes {
                    let key = key(connector, doc);
                    delete(writer, f, &key);
                    touched.insert(key);
                }
                for doc in &batch.upserts {
                    let key = key(&doc.info.connector, &doc.info.doc_id);
                    add(writer, f, revisions, &key, doc)?;
                    touched.insert(key);
                }
            }
            Change::Vectors(embedded) => {
                let searcher = reader.searcher();
                for pending in embedded {
                    let doc = &pending.doc;
                    let key = key(&doc.info.connector, &doc.info.doc_id);
                    let unchanged = !touched.contains(&key)
                        && !purged.contains(&doc.info.connector)
                        && current_revision(&searcher, f, &key)? == Some(pending.revision);
                    if unchanged {
                        add(writer, f, revisions, &key, doc)?;
                        touched.insert(key);
                    }
                }
            }
            Change::Follow(follow) => follow_log(writer, f, follow)?,
        }
    }
    Ok(())
}

/// Applies the team log's `follow`: each document at its position, the revision every host
/// gives it. A record that cannot be read is left out, and said so: the others still apply.
fn follow_log(writer: &IndexWriter, f: &Fields, follow: &Follow) -> tantivy::Result<()> {
    if follow.reset {
        writer.delete_all_documents()?;
    }
    for entry in &follow.entries {
        let key = key(&entry.connector, &entry.doc);
        delete(writer, f, &key);
        let Some(record) = &entry.record else {
            continue;
        };
        match decode(record) {
            Ok(doc) => {
                for stored in doc.to_tantivy(f, entry.position) {
                    writer.add_document(stored)?;
                }
            }
            Err(e) => tracing::error!(position = entry.position, "left out of the index: {e}"),
        }
    }
    Ok(())
}

/// Replaces the document keyed `key` (and the parts of its text) by `doc`.
fn add(
    writer: &IndexWriter,
    f: &Fields,
    revisions: &mut Revisions,
    key: &str,
    doc: &IndexDoc,
) -> tantivy::Result<()> {
    delete(writer, f, key);
    for stored in doc.to_tantivy(f, revisions.next()) {
        writer.add_document(stored)?;
    }
    Ok(())
}
