//! The one writer of the index: a thread that owns tantivy's `IndexWriter`, applies the batches
//! sent to it, and commits. Batches that arrive while it commits are committed together. A batch
//! is acknowledged only once it is committed and visible to searches.

use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use quarry_core::{ConnectorId, DocId};
use tantivy::{IndexReader, IndexWriter, Term};

use crate::IndexError;
use crate::document::{IndexDoc, key};
use crate::schema::Fields;

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

struct Job {
    batch: WriteBatch,
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
            .map_err(|e| IndexError::Tantivy(format!("starting the index writer: {e}")))?;
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
                Err(IndexError::Tantivy("the index writer thread ended".into()))
            }
        }
    }

    /// Applies `batch` and commits; returns once searches see it.
    pub(crate) fn write(&self, batch: WriteBatch) -> Result<(), IndexError> {
        let (done, wait) = sync_channel(1);
        self.jobs
            .as_ref()
            .ok_or(IndexError::Closed)?
            .send(Job { batch, done })
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
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let result = apply(&mut writer, &fields, &group)
            .and_then(|()| writer.commit().map(|_| ()))
            .and_then(|()| reader.reload());
        let result = result.map_err(|e| {
            tracing::error!("index commit failed, rolled back: {e}");
            if let Err(e) = writer.rollback() {
                tracing::error!("index rollback failed: {e}");
            }
            IndexError::Tantivy(e.to_string())
        });
        for job in group {
            let _ = job.done.send(result.clone());
        }
    }
    if let Err(e) = writer.wait_merging_threads() {
        tracing::warn!("index merges did not finish: {e}");
    }
}

/// Deletes the document keyed `key` and the parts of its text.
fn delete(writer: &IndexWriter, f: &Fields, key: &str) {
    writer.delete_term(Term::from_field_text(f.key, key));
    writer.delete_term(Term::from_field_text(f.part_of, key));
}

fn apply(writer: &mut IndexWriter, f: &Fields, group: &[Job]) -> tantivy::Result<()> {
    for job in group {
        let batch = &job.batch;
        for connector in &batch.purge_connectors {
            writer.delete_term(Term::from_field_text(f.connector, connector.as_str()));
            writer.delete_term(Term::from_field_text(f.part_connector, connector.as_str()));
        }
        for (connector, doc) in &batch.deletes {
            delete(writer, f, &key(connector, doc));
        }
        for doc in &batch.upserts {
            delete(writer, f, &key(&doc.info.connector, &doc.info.doc_id));
            for stored in doc.to_tantivy(f) {
                writer.add_document(stored)?;
            }
        }
    }
    Ok(())
}
