//! Quarry's search index, on tantivy.
//!
//! One index holds every connector's documents: title, path and body as words (lowercased,
//! accents folded), connector, extension, size and update time as fast fields, and the extracted
//! text with its pages and metadata stored, so reading a document needs no plugin call. Passage
//! vectors live in the same documents (see `vectors`), so they commit and vanish with them. One
//! writer thread applies batches and commits ([`SearchIndex::write`]); searches use a reader
//! that sees every acknowledged commit. A process that only reads (the CLI while a server runs)
//! opens the index read-only and follows the writer's commits.

mod document;
mod error;
mod export;
mod highlight;
mod hybrid;
mod keyword;
mod keyword_side;
mod kinds;
mod merges;
mod pending;
mod projects;
mod query_syntax;
mod request;
mod schema;
mod search;
mod snippet;
mod team_log;
mod team_position;
mod text_parts;
mod tokenizer;
mod vectors;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Thread;
use std::time::Duration;

use quarry_core::{ConnectorId, DocId};
use tantivy::directory::MmapDirectory;
use tantivy::directory::error::LockError;
use tantivy::indexer::IndexWriterOptions;
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyError};

pub use document::{DocInfo, IndexDoc};
pub use error::IndexError;
pub use export::Export;
pub use highlight::QueryWords;
pub use hybrid::POOL;
pub use kinds::DocKind;
pub use pending::{KindProgress, Pending};
pub use query_syntax::{Part, parse as parse_query};
pub use request::{
    Combine, Filters, Fusion, Passages, Ranking, SearchRequest, SemanticQuery, SortBy, SortOrder,
    TermFeedback, VectorFeedback,
};
pub use search::{Hit, SearchResults};
pub use snippet::Snippet;
pub use team_log::{Applied, TeamLog, encode as encode_record};
pub use vectors::Embedding;
pub use writer::WriteBatch;

use crate::merges::BoundedMerges;
use crate::schema::{ANALYZER, Fields, STEMS_ANALYZER, analyzer, stems_analyzer};
use crate::team_position::TeamPosition;
use crate::vectors::VectorCache;
use crate::writer::{Change, Follow, Writer};
use quarry_core::team_log::LogEntry;

/// Version of the index's layout (schema and analyzers). An index of another version is not
/// opened ([`IndexError::Outdated`]): it is rebuilt from the sources.
pub const FORMAT: u32 = 5;
/// The file in the index folder that records its [`FORMAT`].
const FORMAT_FILE: &str = "quarry-format";

/// How long a team host's write waits for its own copy of the index to show it.
const TEAM_WRITE_WAIT: Duration = Duration::from_secs(60);

/// Memory the writer may use for documents not yet committed.
const WRITER_HEAP_BYTES: usize = 96 << 20;

/// Why the index in `dir` cannot be opened.
fn open_error(dir: &Path, e: impl std::fmt::Display) -> IndexError {
    IndexError::Open {
        path: PathBuf::from(dir),
        message: e.to_string(),
    }
}

/// Checks that an existing index in `dir` has this build's [`FORMAT`]; records it for a new one.
fn check_format(dir: &Path) -> Result<(), IndexError> {
    let format_file = dir.join(FORMAT_FILE);
    if !dir.join("meta.json").is_file() {
        return std::fs::write(&format_file, FORMAT.to_string()).map_err(|e| open_error(dir, e));
    }
    let found = std::fs::read_to_string(&format_file)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(0);
    if found != FORMAT {
        return Err(IndexError::Outdated {
            path: dir.to_owned(),
            found,
            expected: FORMAT,
        });
    }
    Ok(())
}

/// Starts the writer thread of `index`; [`IndexError::Busy`] when another process holds the
/// index's writer lock.
fn start_writer(
    index: &Index,
    dir: &Path,
    reader: IndexReader,
    fields: Fields,
) -> Result<Writer, IndexError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    // Created on the writer's thread, which runs in the background: tantivy's indexing and
    // merging threads start there and inherit its priority.
    let create = {
        let index = index.clone();
        let dir = dir.to_owned();
        move || {
            // One merge at a time: each keeps the segments it reads resident, and on a
            // machine of 2 cores more merges would only take turns.
            let options = IndexWriterOptions::builder()
                .num_worker_threads(threads)
                .memory_budget_per_thread(WRITER_HEAP_BYTES / threads)
                .num_merge_threads(1)
                .build();
            let writer = index.writer_with_options(options).map_err(|e| match e {
                TantivyError::LockFailure(LockError::LockBusy, _) => IndexError::Busy,
                e => open_error(&dir, e),
            })?;
            writer.set_merge_policy(Box::new(BoundedMerges::default()));
            Ok(writer)
        }
    };
    Writer::start(create, reader, fields)
}

/// The index: a reader, and the writer when opened for writing.
pub struct SearchIndex {
    reader: IndexReader,
    fields: Fields,
    writer: Option<Writer>,
    vectors: VectorCache,
    /// Threads woken after each commit of this process ([`SearchIndex::wake_on_commit`]).
    woken_on_commit: Mutex<Vec<Thread>>,
    /// The software projects the embedding queue has found ([`SearchIndex::pending_vectors`]).
    projects: Mutex<projects::Projects>,
    /// On a team host: the team's log, which every write goes to.
    team: Option<Team>,
}

/// A team host's index: writes go to the team's log and come back through the follower.
struct Team {
    log: Arc<dyn TeamLog>,
    /// Where the copy stands in the log.
    position: TeamPosition,
}

impl SearchIndex {
    /// Opens (creating if needed) the index in `dir`. With `writable`, takes the index's writer
    /// lock; [`IndexError::Busy`] means another process holds it.
    pub fn open(dir: &Path, writable: bool) -> Result<SearchIndex, IndexError> {
        std::fs::create_dir_all(dir).map_err(|e| open_error(dir, e))?;
        check_format(dir)?;
        let (schema, fields) = Fields::schema();
        let directory = MmapDirectory::open(dir).map_err(|e| open_error(dir, e))?;
        let index = Index::open_or_create(directory, schema).map_err(|e| open_error(dir, e))?;
        index.tokenizers().register(ANALYZER, analyzer());
        index
            .tokenizers()
            .register(STEMS_ANALYZER, stems_analyzer());
        let policy = if writable {
            ReloadPolicy::Manual
        } else {
            ReloadPolicy::OnCommitWithDelay
        };
        let reader = index
            .reader_builder()
            .reload_policy(policy)
            .try_into()
            .map_err(|e| open_error(dir, e))?;
        let writer = if writable {
            Some(start_writer(&index, dir, reader.clone(), fields)?)
        } else {
            None
        };
        Ok(SearchIndex {
            reader,
            fields,
            writer,
            vectors: VectorCache::default(),
            woken_on_commit: Mutex::default(),
            projects: Mutex::default(),
            team: None,
        })
    }

    /// Makes this writable index a team host's copy of the team's index: its writes go to
    /// `log`, and the host's follower applies the log back ([`SearchIndex::follow`]), starting
    /// after `applied` (see [`SearchIndex::applied`]).
    pub fn join_team(mut self, log: Arc<dyn TeamLog>, applied: u64) -> SearchIndex {
        self.team = Some(Team {
            log,
            position: TeamPosition::new(applied, TEAM_WRITE_WAIT),
        });
        self
    }

    /// What the index's last commit recorded of the team's log; `None` for an index that never
    /// followed one.
    pub fn applied(&self) -> Result<Option<Applied>, IndexError> {
        let metas = self.reader.searcher().index().load_metas()?;
        Ok(metas.payload.as_deref().and_then(Applied::parse))
    }

    /// Applies changes read from the team's log, in its order, and records `applied`; with
    /// `reset`, empties the index first. Returns once searches see them.
    pub fn follow(
        &self,
        reset: bool,
        entries: Vec<LogEntry>,
        applied: Applied,
    ) -> Result<(), IndexError> {
        let position = applied.position;
        self.commit(Change::Follow(Follow {
            reset,
            entries,
            applied,
        }))?;
        if let Some(team) = &self.team {
            team.position.moved_to(position, reset);
        }
        Ok(())
    }

    /// Unparks `thread` after every commit this process makes, so that a thread waiting for
    /// new documents can park without a timeout instead of polling.
    pub fn wake_on_commit(&self, thread: Thread) {
        self.woken_on_commit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(thread);
    }

    /// Applies `change` and wakes the threads waiting for a commit.
    fn commit(&self, change: Change) -> Result<(), IndexError> {
        let written = self
            .writer
            .as_ref()
            .ok_or(IndexError::ReadOnly)?
            .write(change);
        for thread in self
            .woken_on_commit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            thread.unpark();
        }
        written
    }

    /// True when this process holds the writer.
    pub fn is_writable(&self) -> bool {
        self.writer.is_some()
    }

    /// Applies a batch and commits it; returns once searches see it.
    pub fn write(&self, batch: WriteBatch) -> Result<(), IndexError> {
        if batch.is_empty() {
            return Ok(());
        }
        match &self.team {
            Some(team) => team
                .position
                .wait_for(team.log.append(writer::batch_changes(batch))?),
            None => self.commit(Change::Batch(batch)),
        }
    }

    /// Writes documents over the versions they were read at: here, or through the team's log.
    fn write_over(&self, docs: Vec<Pending>) -> Result<(), IndexError> {
        match &self.team {
            Some(team) => team
                .position
                .wait_for(team.log.append(writer::revision_changes(docs))?),
            None => self.commit(Change::Vectors(docs)),
        }
    }

    /// Up to `max_docs` documents that lack vectors of `model` (written without a model, with
    /// another, or since the last embedding; or with the vectors of their first passages only),
    /// in the embedding queue's order (the documents of the connectors `first`, then the others;
    /// prose first; within a kind, documents without vectors before the rest of long ones;
    /// prose outside software projects before the prose inside them; the newest first:
    /// `pending.rs`) and read whole; fewer once their texts hold `max_bytes` (always one at
    /// least). Empty when none is pending.
    pub fn pending_vectors(
        &self,
        model: &str,
        first: &[ConnectorId],
        max_docs: usize,
        max_bytes: usize,
    ) -> Result<Vec<Pending>, IndexError> {
        let mut projects = self.projects.lock().unwrap_or_else(|e| e.into_inner());
        pending::take(
            &self.reader.searcher(),
            &self.fields,
            model,
            first,
            &mut projects,
            max_docs,
            max_bytes,
        )
    }

    /// Per kind of document ([`DocKind`], those that have documents), how many there are and
    /// how many have vectors of `model`: of `connector`, or of every connector.
    pub fn embedding_by_kind(
        &self,
        model: &str,
        connector: Option<&ConnectorId>,
    ) -> Result<Vec<KindProgress>, IndexError> {
        pending::by_kind(
            &self.reader.searcher(),
            &self.fields,
            model,
            connector.map(ConnectorId::as_str),
        )
    }

    /// How many documents lack vectors of `model`: of `connector`, or of every connector.
    pub fn pending_count(
        &self,
        model: &str,
        connector: Option<&ConnectorId>,
    ) -> Result<u64, IndexError> {
        pending::count(
            &self.reader.searcher(),
            &self.fields,
            model,
            connector.map(ConnectorId::as_str),
        )
    }

    /// Stores the vectors of documents taken with [`SearchIndex::pending_vectors`] (their
    /// `embedding` set) and commits. A document written or removed since it was taken is left
    /// as it is now: its new version is pending in turn.
    pub fn add_vectors(&self, embedded: Vec<Pending>) -> Result<(), IndexError> {
        if embedded.is_empty() {
            return Ok(());
        }
        self.write_over(embedded)
    }

    /// A stored document, read whole, with the revision it was read at: change it and hand it
    /// back with [`SearchIndex::revise`]. `None` when the index does not hold it.
    pub fn document_to_revise(
        &self,
        connector: &ConnectorId,
        doc: &DocId,
    ) -> Result<Option<Pending>, IndexError> {
        pending::one(&self.reader.searcher(), &self.fields, connector, doc)
    }

    /// Writes documents read with [`SearchIndex::document_to_revise`] (or
    /// [`SearchIndex::pending_vectors`]) back as they were changed, and commits; a document
    /// written or removed since it was read is left as it is now. A revised document without
    /// vectors is pending for the embedding queue.
    pub fn revise(&self, docs: Vec<Pending>) -> Result<(), IndexError> {
        if docs.is_empty() {
            return Ok(());
        }
        self.write_over(docs)
    }

    /// A number that changes whenever searches see a new commit.
    pub fn generation(&self) -> u64 {
        self.reader.searcher().generation().generation_id()
    }

    /// Runs a search: keyword, or fused with semantic ranking as `request.ranking` says.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, IndexError> {
        search::run(
            &self.reader.searcher(),
            &self.fields,
            &self.vectors,
            request,
        )
    }

    /// Every document, read whole with its vectors, one at a time (for moving a data folder's
    /// index into a team's log).
    pub fn export(&self) -> Result<Export, IndexError> {
        Export::new(self.reader.searcher(), self.fields)
    }

    /// Bytes of memory held by passage vectors (one copy per segment, loaded on first use).
    pub fn vector_memory(&self) -> usize {
        self.vectors.size()
    }

    /// A stored document, with its whole text.
    pub fn document(
        &self,
        connector: &ConnectorId,
        doc: &DocId,
    ) -> Result<Option<IndexDoc>, IndexError> {
        Ok(self.document_to_revise(connector, doc)?.map(|p| p.doc))
    }

    /// Documents in the index, all connectors together (the parts of long texts not counted).
    pub fn num_docs(&self) -> Result<u64, IndexError> {
        let searcher = self.reader.searcher();
        Ok(searcher.search(&*document::documents(), &tantivy::collector::Count)? as u64)
    }

    /// Makes the reader see the latest commit now (a read-only index also follows commits on
    /// its own, within about a second).
    pub fn refresh(&self) -> Result<(), IndexError> {
        Ok(self.reader.reload()?)
    }
}
