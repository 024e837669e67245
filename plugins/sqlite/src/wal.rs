//! The write-ahead log (`-wal` file): the frames of its current generation (the header's salts)
//! whose checksums chain, up to the last commit frame. Frames after it (a transaction being
//! written) and of an older generation are left out, as SQLite itself leaves them out.

use std::collections::HashMap;

use crate::{Error, corrupt};

/// The pages committed in the log, and the database's size in pages after the last commit.
#[derive(Default)]
pub struct Committed {
    /// Each page's newest committed content, by number.
    pub pages: HashMap<u32, Vec<u8>>,
    /// The database's pages after the last commit, when the log has one.
    pub page_count: Option<u32>,
}

/// The committed pages of log `wal` of a database of `page_size` pages.
pub fn committed_pages(wal: &[u8], page_size: usize) -> Result<Committed, Error> {
    if wal.len() < 32 {
        return Ok(Committed::default());
    }
    let word = |at: usize| u32::from_be_bytes([wal[at], wal[at + 1], wal[at + 2], wal[at + 3]]);
    let magic = word(0);
    let big_endian = match magic {
        0x377f_0682 => false,
        0x377f_0683 => true,
        _ => return Err(corrupt("its log does not start as one")),
    };
    if word(8) as usize != page_size {
        // A log of another page size is not this database's (SQLite ignores it too).
        return Ok(Committed::default());
    }
    let salts = (word(16), word(20));
    let mut sum = checksum(&wal[..24], (0, 0), big_endian);
    if sum != (word(24), word(28)) {
        return Ok(Committed::default());
    }
    let frame = 24 + page_size;
    let mut pending: Vec<(u32, usize)> = Vec::new();
    let mut done = Committed::default();
    let mut at = 32;
    while at + frame <= wal.len() {
        let (page, after) = (word(at), word(at + 4));
        if (word(at + 8), word(at + 12)) != salts {
            break;
        }
        sum = checksum(&wal[at..at + 8], sum, big_endian);
        sum = checksum(&wal[at + 24..at + frame], sum, big_endian);
        if sum != (word(at + 16), word(at + 20)) {
            break;
        }
        pending.push((page, at + 24));
        if after != 0 {
            for (page, data) in pending.drain(..) {
                done.pages
                    .insert(page, wal[data..data + page_size].to_vec());
            }
            done.page_count = Some(after);
        }
        at += frame;
    }
    Ok(done)
}

/// SQLite's log checksum of `bytes` (a multiple of 8 long) from `start`.
fn checksum(bytes: &[u8], start: (u32, u32), big_endian: bool) -> (u32, u32) {
    let (mut s0, mut s1) = start;
    for pair in bytes.chunks_exact(8) {
        let read = |b: &[u8]| {
            let raw = [b[0], b[1], b[2], b[3]];
            if big_endian {
                u32::from_be_bytes(raw)
            } else {
                u32::from_le_bytes(raw)
            }
        };
        s0 = s0.wrapping_add(read(&pair[..4])).wrapping_add(s1);
        s1 = s1.wrapping_add(read(&pair[4..])).wrapping_add(s0);
    }
    (s0, s1)
}
