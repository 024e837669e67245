//! A gzip stream (`.gz`, `.tgz`, `.tar.gz`, several members one after another) decompressed as its
//! bytes arrive, within a bound on what it expands to: its contents are judged as the file they
//! are, never held whole.

use std::io::Write as _;

use flate2::write::MultiGzDecoder;

use crate::archive::{EXPANSION, MIN_EXPANDED};

/// Whether a file starting with `start` is gzip.
pub(crate) fn is_gzip(start: &[u8]) -> bool {
    start.starts_with(&[0x1F, 0x8B])
}

/// Bytes a gzip stream may expand to, at most (at least [`MIN_EXPANDED`], and [`EXPANSION`]
/// times what was read, as an archive).
const MAX_EXPANDED: u64 = 16 << 30;

/// A gzip stream being decompressed.
pub(crate) struct Gunzip {
    decoder: MultiGzDecoder<Vec<u8>>,
    read: u64,
    written: u64,
}

impl Gunzip {
    pub(crate) fn new() -> Gunzip {
        Gunzip {
            decoder: MultiGzDecoder::new(Vec::new()),
            read: 0,
            written: 0,
        }
    }

    /// Decompresses the next `data`: the bytes it gave, or why the stream cannot be read.
    pub(crate) fn push(&mut self, data: &[u8]) -> Result<Vec<u8>, String> {
        self.read += data.len() as u64;
        self.decoder
            .write_all(data)
            .map_err(|e| format!("is a gzip file that cannot be read ({e})"))?;
        self.take()
    }

    /// Ends the stream: the last bytes it gave, or why it cannot be read (cut short).
    pub(crate) fn finish(&mut self) -> Result<Vec<u8>, String> {
        self.decoder
            .try_finish()
            .map_err(|e| format!("is a gzip file that cannot be read to its end ({e})"))?;
        self.take()
    }

    fn take(&mut self) -> Result<Vec<u8>, String> {
        let out = std::mem::take(self.decoder.get_mut());
        self.written += out.len() as u64;
        let bound = self
            .read
            .saturating_mul(EXPANSION)
            .clamp(MIN_EXPANDED, MAX_EXPANDED);
        if self.written > bound {
            return Err(format!(
                "is a gzip file that expands past {} MiB: a bomb, or too large to check",
                bound >> 20
            ));
        }
        Ok(out)
    }
}
