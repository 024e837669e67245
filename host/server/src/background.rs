//! The work that follows the sources while `quarry serve` runs: the sync scheduler, the
//! embedding queue, the OCR queue and the judge of files no sync judged. A data folder's own
//! process does it from the start. On a team database one host at a time does it: the host
//! holding the team's sync turn (`quarry_store::SyncTurn`); the others wait to take the turn
//! over, and a host that loses it (its database connection dropped, a failover) stops its work
//! and waits again. There, a second scheduler runs all along on every host, for the connectors
//! that live on it (its folders).

use std::sync::Arc;
use std::time::Duration;

use quarry_core::ocr::TextRecognizer;
use quarry_embed::Embedder;
use quarry_index::SearchIndex;
use quarry_ocr::LazyOcr;
use quarry_store::{Dialect, Store, SyncTurn};
use quarry_sync::{EmbeddingOrder, EmbeddingQueue, OcrQueue, OriginalsQueue, Scheduler, Syncer};
use tokio::sync::watch;

/// How long a team host waits before asking for the turn again after the database failed.
const RETRY_TURN: Duration = Duration::from_secs(2);

/// The background work, ready to run.
pub struct Background {
    work: Work,
    /// Started at once, for a data folder's own process.
    started: Option<Working>,
}

/// What the work runs on.
struct Work {
    store: Store,
    syncer: Arc<Syncer>,
    ocr: Option<Arc<dyn TextRecognizer>>,
    embedding: Option<Embedding>,
    scheduler: Arc<Scheduler>,
    /// On a team database, the scheduler of this host's own connectors (its folders), run
    /// whether it holds the turn or not.
    homed: Option<Arc<Scheduler>>,
}

/// The sync schedulers of `serve`.
pub struct Schedulers {
    /// Of every connector (a data folder), or of the team's connectors that live on any host
    /// (run while holding the turn).
    pub main: Arc<Scheduler>,
    /// Of the team's connectors that live on this host.
    pub homed: Option<Arc<Scheduler>>,
}

/// What the embedding queue needs: the index, the model, the order of the connectors.
pub struct Embedding {
    /// The index whose documents lack vectors.
    pub index: Arc<SearchIndex>,
    /// The model.
    pub embedder: Arc<Embedder>,
    /// The connectors whose documents go first.
    pub order: EmbeddingOrder,
}

/// The work running; it stops when dropped.
struct Working {
    _embedding: Option<EmbeddingQueue>,
    _ocr: Option<OcrQueue>,
    _originals: OriginalsQueue,
    turn: SyncTurn,
}

impl Background {
    /// The work over `syncer` (and vectors, with `embedding`); for a data folder it starts
    /// now (a failure stops `serve`).
    pub async fn new(
        store: &Store,
        syncer: Arc<Syncer>,
        ocr: Option<Arc<LazyOcr>>,
        embedding: Option<Embedding>,
        schedulers: Schedulers,
    ) -> anyhow::Result<Background> {
        let work = Work {
            store: store.clone(),
            syncer,
            ocr: ocr.map(|engine| engine as Arc<dyn TextRecognizer>),
            embedding,
            scheduler: schedulers.main,
            homed: schedulers.homed,
        };
        let started = match store.dialect() {
            Dialect::Sqlite => Some(work.start(store.wait_for_sync_turn().await?).await?),
            Dialect::Postgres => None,
        };
        Ok(Background { work, started })
    }

    /// Runs the work until `stop` is raised.
    pub async fn run(self, stop: watch::Receiver<bool>) {
        let Background { work, started } = self;
        if let Some(working) = started {
            work.scheduler.run(raised(stop)).await;
            drop(working);
            return;
        }
        let homed = work.homed.clone().map(|scheduler| {
            let stop = stop.clone();
            tokio::spawn(async move {
                if let Err(e) = scheduler.start().await {
                    tracing::warn!("cannot start the syncs of this host's own folders: {e}");
                }
                scheduler.run(raised(stop)).await;
            })
        });
        work.take_turns(stop).await;
        if let Some(homed) = homed {
            let _ = homed.await;
        }
    }
}

impl Work {
    /// On a team database: waits for the turn, works until `stop` is raised or the turn is
    /// lost, and then waits for it again.
    async fn take_turns(&self, stop: watch::Receiver<bool>) {
        while !*stop.borrow() {
            tracing::info!("waiting for this host's turn to run the team's syncs");
            let turn = tokio::select! {
                turn = self.store.wait_for_sync_turn() => turn,
                () = raised(stop.clone()) => return,
            };
            let turn = match turn {
                Ok(turn) => turn,
                Err(e) => {
                    tracing::warn!("cannot ask for the team's sync turn: {e}");
                    pause(&stop).await;
                    continue;
                }
            };
            tracing::info!("this host now runs the team's syncs");
            let mut working = match self.start(turn).await {
                Ok(working) => working,
                Err(e) => {
                    tracing::warn!("cannot start the team's syncs: {e:#}");
                    pause(&stop).await;
                    continue;
                }
            };
            let stop = stop.clone();
            self.scheduler
                .run(async {
                    tokio::select! {
                        () = raised(stop) => {}
                        () = working.turn.lost() => {
                            tracing::warn!("this host lost the team's sync turn: its syncs stop, and it waits to take the turn again");
                        }
                    }
                })
                .await;
        }
    }

    /// Starts the queues and the scheduler's first look (interrupted syncs resume).
    async fn start(&self, turn: SyncTurn) -> anyhow::Result<Working> {
        // Documents are searchable by keyword as soon as a sync writes them; their vectors
        // follow, in the order the scheduler keeps from the store (the connectors put first).
        let embedding = self
            .embedding
            .as_ref()
            .map(|e| EmbeddingQueue::start(e.index.clone(), e.embedder.clone(), e.order.clone()))
            .transpose()?;
        // Text in images and scanned pages follows, read one document at a time.
        let ocr = self
            .ocr
            .clone()
            .map(|engine| OcrQueue::start(self.syncer.clone(), engine))
            .transpose()?;
        // Files an older Quarry indexed without judging them are judged in the background;
        // until then they are not served.
        let unjudged = self.store.count_pending_originals().await?;
        if unjudged > 0 {
            tracing::info!(
                "{unjudged} document(s) have files not checked for credentials yet (indexed by an older Quarry, or read by OCR since): they are checked in the background, and not served until then"
            );
        }
        let originals = OriginalsQueue::start(self.syncer.clone())?;
        self.scheduler.start().await?;
        Ok(Working {
            _embedding: embedding,
            _ocr: ocr,
            _originals: originals,
            turn,
        })
    }
}

/// Waits [`RETRY_TURN`], or less if `stop` is raised meanwhile.
async fn pause(stop: &watch::Receiver<bool>) {
    tokio::select! {
        () = tokio::time::sleep(RETRY_TURN) => {}
        () = raised(stop.clone()) => {}
    }
}

/// Resolves once `flag` is raised (or its sender is gone).
pub(crate) async fn raised(mut flag: watch::Receiver<bool>) {
    let _ = flag.wait_for(|raised| *raised).await;
}
