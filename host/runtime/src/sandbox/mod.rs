//! The sandbox layer: the only part of the runtime that names an instance's state
//! ([`instance::HostState`]). It applies the policy (`crate::policy`) to each instance and
//! implements what the linker gets besides wasmtime-wasi's own: the shadows of WASI's file
//! calls (`files/`), of its waits (`waits.rs`), the HTTP gate (`http.rs`, `outbound.rs`), its
//! streams (`streams.rs`, with the host's TLS in `tls.rs` and STARTTLS in `starttls.rs`), the
//! plugin's output and reports (`stdio.rs`, `reports.rs`) and its memory cap (`limiter.rs`).
//! Each area keeps its own slice of the state, and a shadow sees only its slice (the manner of
//! wasmtime-wasi's `WasiFilesystemCtx` and its view).

pub(crate) mod connection_error;
pub(crate) mod files;
pub(crate) mod http;
pub(crate) mod instance;
pub(crate) mod limiter;
pub(crate) mod ocr;
mod outbound;
pub(crate) mod reports;
pub(crate) mod starttls;
pub(crate) mod stdio;
pub(crate) mod stopped;
pub(crate) mod streams;
pub(crate) mod tls;
pub(crate) mod waits;
