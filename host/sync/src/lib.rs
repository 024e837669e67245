//! Quarry's sync: brings connectors' documents into the index and the catalog.
//!
//! [`Syncer::sync`] runs one connector's sync in resumable, crash-safe batches; [`Scheduler`]
//! runs syncs and purges in a server as the store asks for them (a new connector, a request from
//! the CLI or the settings page, a removal), on each connector's schedule, and as soon as a
//! watched folder changes. [`EmbeddingQueue`] computes the passage vectors of what the syncs
//! wrote, in the background. Every fetched document is judged for credentials before the index
//! sees it (`credentials`); [`recheck_index`] checks an index written under older rules.

mod adding;
mod background;
mod credentials;
mod disk_space;
mod embed;
mod embedding_queue;
mod error;
mod ocr_queue;
mod originals;
mod originals_queue;
mod scan_text;
mod scheduler;
mod source_watch;
mod store_changes;
mod syncer;
mod watch;
mod watch_tree;

pub use adding::{ConnectorRequest, add_connector, own_folders_inside, seal_stored_secrets};
pub use credentials::{RULES_VERSION, Recheck, recheck_index};
pub use disk_space::{DiskReserve, RESERVE_BYTES, RESUME_FREE_BYTES};
pub use embed::embed_docs;
pub use embedding_queue::{EmbeddingOrder, EmbeddingQueue, embed_all_pending, embed_round};
pub use error::SyncError;
pub use ocr_queue::OcrQueue;
pub use originals::{
    REFUSED_CHANGED, REFUSED_PENDING, REFUSED_REDACTED, REFUSED_TOO_LARGE, REFUSED_UNJUDGED,
    Serving, Verified, served_bytes, serving, verify,
};
pub use originals_queue::OriginalsQueue;
pub use scheduler::{Scheduler, TICK};
pub use source_watch::MAX_WATCHED;
pub use syncer::{SyncReport, Syncer, plugin_usage};
pub use watch::{MAX_DELAY, QUIET, RESCAN_EVERY};
