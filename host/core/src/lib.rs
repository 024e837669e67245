//! Quarry's shared vocabulary: identifiers, the documents connectors produce, the table of API
//! error codes, which script a character is in, and outside text made safe for a terminal; and
//! small calls on the process and its files (thread priority, giving freed memory back, whether
//! a file may be trusted). No other I/O.
//!
//! Every other host crate depends on this one; it depends on nothing of ours.

#![warn(missing_docs)]

mod api_error;
mod error;
mod ids;
pub mod memory;
pub mod ocr;
pub mod priority;
pub mod script;
mod source;
pub mod team_log;
pub mod terminal;
pub mod times;
pub mod trust;

pub use api_error::{ApiCode, ErrorCode, ErrorKind};
pub use error::CoreError;
pub use ids::{ConnectorId, DocId, MAX_ID_LEN, is_valid_id};
pub use source::{
    Coverage, DocMeta, ExtractedText, FileChunk, SourceBatch, SourceDoc, extension_of, page_at,
    split_pages,
};
