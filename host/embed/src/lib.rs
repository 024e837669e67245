//! Quarry's embeddings.
//!
//! A sentence-embedding model (by default all-MiniLM-L6-v2 as ONNX Runtime's fused kernels,
//! its products in int8 where that keeps search as good: [`graph`]) runs in process on ONNX
//! Runtime, loaded at run time from its shared library; no Python is involved. Passages are
//! embedded in length-sorted batches on their own session, so a query never waits behind an
//! indexing batch; query vectors are cached briefly. A model's prompts (E5's `query: ` and
//! `passage: `) are put before queries and passages as its `config_sentence_transformers.json`
//! asks. `chunk` cuts documents into passages of about 180 words (`TARGET_WORDS`) that keep to
//! paragraph and page boundaries.

mod cache;
mod chunk;
mod error;
pub mod graph;
mod model;
mod pooling;
mod prompts;

pub use chunk::{Passage, chunk};
pub use error::EmbedError;
pub use graph::{Graph, GraphChoice};
pub use model::{EmbedConfig, Embedder, model_id, onnx_runtime};
