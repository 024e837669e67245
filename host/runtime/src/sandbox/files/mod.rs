//! The sandbox's files. One guarded open (`guard.rs`) serves WASI's opens (`wasi.rs`, with
//! `descriptors.rs` and `stat.rs`) and Quarry's bulk reads (`bulk.rs`) alike; `mounts.rs` knows
//! the granted folders; `read.rs` reads what was opened.

pub(crate) mod bulk;
mod descriptors;
pub(crate) mod guard;
pub(crate) mod mounts;
pub(crate) mod read;
mod stat;
pub(crate) mod wasi;
