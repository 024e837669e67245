//! Quarry's shared vocabulary: identifiers and the documents connectors produce. No I/O.
//!
//! Every other host crate depends on this one; it depends on nothing of ours.

mod error;
mod ids;
mod source;

pub use error::CoreError;
pub use ids::{DocId, MAX_ID_LEN, is_valid_id};
pub use source::{Coverage, ExtractedText, FileChunk, SourceBatch, SourceDoc};
