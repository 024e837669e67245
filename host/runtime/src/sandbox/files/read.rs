//! Reading an opened file for a plugin: `read` at an offset on the calling thread, up to 1 MiB at
//! a time, saying when it met the end of the file (by the size the file had when it was opened);
//! and the times a file's metadata gives, as WASI and the bulk reads tell them.

use std::collections::HashMap;

use rustix::buffer::spare_capacity;
use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

/// The most one `read` answers: a whole file of up to this size costs one call, and the host
/// never holds more than this for one read.
const MAX_READ_BYTES: u64 = 1 << 20;

/// The size of each file the guest opened, as it was at the open (which statted it anyway), by
/// its descriptor's handle. Every file descriptor of a sandbox comes from the guarded open, which
/// records its size under the handle it gets, so the entry for a file's handle is its own even
/// when the handle was another's before; the entries are as many as the handles the resource
/// table ever used at once.
#[derive(Default)]
pub(crate) struct OpenedSizes(HashMap<u32, u64>);

impl OpenedSizes {
    pub(crate) fn record(&mut self, opened: &Resource<Descriptor>, size: Option<u64>) {
        match size {
            Some(size) => self.0.insert(opened.rep(), size),
            None => self.0.remove(&opened.rep()),
        };
    }

    pub(crate) fn size_of(&self, file: &Resource<Descriptor>) -> Option<u64> {
        self.0.get(&file.rep()).copied()
    }
}

/// `read`: up to `len` bytes (at most [`MAX_READ_BYTES`]) at `offset`, on the calling thread,
/// without wasmtime-wasi's detour through an async runtime. It reads until it has `len` bytes or
/// the file ends, and says `true` when it met the end (with the last bytes, as WASI allows), so a
/// file smaller than `len` costs the guest one call. Bytes land in the buffer unzeroed.
///
/// `size` is the file's size when it was opened: a read that got fewer bytes than it asked for
/// and stopped exactly there has met the end of the file, with no empty read to prove it (a
/// file that grew since would have given more; one whose filesystem answers short reads
/// anywhere else is read on).
pub(crate) fn read_at(
    file: &std::fs::File,
    len: u64,
    offset: u64,
    size: Option<u64>,
) -> Result<(Vec<u8>, bool), ErrorCode> {
    let want = usize::try_from(len.min(MAX_READ_BYTES)).unwrap_or(0);
    let mut buffer = Vec::with_capacity(want);
    // As wasmtime-wasi: an empty read says "end".
    let mut end = want == 0;
    while buffer.len() < want {
        let at = offset.saturating_add(buffer.len() as u64);
        let asked = want - buffer.len();
        match rustix::io::pread(file, spare_capacity(&mut buffer), at) {
            Ok(0) => {
                end = true;
                break;
            }
            Ok(got) if got < asked && Some(at.saturating_add(got as u64)) == size => {
                end = true;
                break;
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                // A filesystem that honours non-blocking opens for files (see `open`): this file
                // reads blocking from now on.
                rustix::fs::fcntl_setfl(file, rustix::fs::OFlags::empty())
                    .map_err(|e| ErrorCode::from(std::io::Error::from(e)))?;
            }
            Err(e) => return Err(ErrorCode::from(std::io::Error::from(e))),
        }
    }
    buffer.truncate(want);
    Ok((buffer, end))
}

/// Nanoseconds since the Unix epoch of a time the system gave in seconds and nanoseconds; none
/// before 1970 (or past the year 2554).
pub(crate) fn timestamp_ns(seconds: i64, nanoseconds: u64) -> Option<u64> {
    u64::try_from(seconds)
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(nanoseconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_answers_at_most_one_mebibyte_and_says_when_it_met_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("file");
        std::fs::write(&path, vec![7u8; (1 << 20) + 10]).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let read = |len, offset| read_at(&file, len, offset, None).expect("reads");

        let (bytes, end) = read(u64::MAX, 0);
        assert_eq!((bytes.len(), end), (1 << 20, false));
        assert!(bytes.iter().all(|&b| b == 7));
        assert_eq!(read(u64::MAX, 1 << 20).0.len(), 10);
        assert!(
            read(u64::MAX, 1 << 20).1,
            "the end, met with the last bytes"
        );
        assert_eq!(read(5, 0).0.len(), 5);
        assert!(!read(5, 0).1);
        assert_eq!(read(5, 1 << 30), (Vec::new(), true));
        assert_eq!(read(0, 0), (Vec::new(), true));

        // With the size the file had when it was opened (the end is then known without an empty
        // read), every answer is the same, also when that size is out of date.
        let size = (1 << 20) + 10;
        for believed in [size, size - 5, size + 5, 0] {
            for (len, offset) in [(u64::MAX, 0), (u64::MAX, 1 << 20), (5, 0), (20, size - 10)] {
                assert_eq!(
                    read_at(&file, len, offset, Some(believed)).expect("reads"),
                    read(len, offset),
                    "believed {believed}, read {len} at {offset}"
                );
            }
        }
    }
}
