//! Bounds on every plugin call: time, memory, and the size of what comes back.

use std::time::Duration;

/// Limits applied to the calls of one plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory the plugin may use, in bytes (all memories of the instance together).
    pub memory_bytes: u64,
    /// Wall-clock time one call may take.
    pub call_timeout: Duration,
    /// Upserts plus deletes in one listing batch.
    pub max_batch_docs: usize,
    /// Bytes of extracted text one document may have.
    pub max_text_bytes: usize,
    /// Bytes of one `read-file` chunk the host asks for.
    pub max_chunk_bytes: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 256 << 20,
            call_timeout: Duration::from_secs(30),
            max_batch_docs: 10_000,
            max_text_bytes: 64 << 20,
            max_chunk_bytes: 1 << 20,
        }
    }
}

/// Longest locator or checkpoint, in bytes.
pub const MAX_LOCATOR_BYTES: usize = 4096;
/// Longest title, path, URL, MIME type or version, in bytes.
pub const MAX_FIELD_BYTES: usize = 4096;
/// Most metadata entries per document.
pub const MAX_METADATA_ENTRIES: usize = 64;
/// Longest log line kept from a plugin, in bytes.
pub const MAX_LOG_LINE_BYTES: usize = 2048;
/// Most log lines kept from one plugin instance; the rest are counted and dropped.
pub const MAX_LOG_LINES: u32 = 1000;
/// Bytes of stdout and stderr kept from one plugin instance (the last ones, where panics land).
pub const MAX_STDIO_BYTES: usize = 16 << 10;
