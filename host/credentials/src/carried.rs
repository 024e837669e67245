//! A base64 block that a window of a file's reading ends inside (a mail's attachment larger
//! than a window), when what it encodes is an archive or a compressed stream, which can only be
//! judged whole: its characters are carried on through the file's next chunks until the block
//! ends, then decoded and judged as the file it is. At most [`MAX_CARRIED`] characters.

use crate::archive::is_archive;
use crate::encoded::{self, is_base64};
use crate::gunzip::is_gzip;

/// Base64 characters a carried block may hold (48 MiB decoded).
pub(crate) const MAX_CARRIED: usize = 64 << 20;

/// Characters of a line that may go on to the next (wrapped base64).
const MIN_LINE: usize = 40;

/// A block being carried.
pub(crate) struct Carried {
    /// What the text names it (a MIME part's `filename`), or nothing.
    pub name: String,
    encoded: Vec<u8>,
    line_start: bool,
}

impl Carried {
    /// The block `window` ends inside, when it begins in it (or `at_file_start`) and encodes an
    /// archive or a gzip stream.
    pub(crate) fn starting(window: &str, at_file_start: bool) -> Option<Carried> {
        // The window ends in wrapped base64: its last whole line is, and what follows it (a
        // line cut short, maybe nothing) is too.
        let body = window.trim_end_matches(['\r', '\n']);
        let mut lines = body.rsplit('\n').map(|line| line.trim_end_matches('\r'));
        let last = lines.next()?;
        let whole = if last.len() >= MIN_LINE {
            last
        } else {
            lines.next()?
        };
        let encoded = |line: &str| line.bytes().all(|b| is_base64(b) || b == b'=');
        if whole.len() < MIN_LINE || !encoded(whole) || !encoded(last) {
            return None;
        }
        let block = encoded::blocks(window).pop()?;
        if block.origin.end < body.len() || (block.origin.start == 0 && !at_file_start) {
            return None;
        }
        if !(is_archive(&block.bytes) || is_gzip(&block.bytes)) {
            return None;
        }
        Some(Carried {
            name: block.name.unwrap_or_default(),
            encoded: window.as_bytes()[block.origin]
                .iter()
                .copied()
                .filter(|b| is_base64(*b))
                .collect(),
            line_start: window.ends_with('\n'),
        })
    }

    /// Takes the block's characters from the start of `data`, the file's next bytes: true once
    /// the block ended (or it ended before them).
    pub(crate) fn feed(&mut self, data: &[u8]) -> bool {
        for &b in data {
            match b {
                b'\r' => {}
                b'\n' if self.line_start => return true,
                b'\n' => self.line_start = true,
                b'=' => self.line_start = false,
                b if is_base64(b) && !(self.line_start && b == b'-') => {
                    self.encoded.push(b);
                    self.line_start = false;
                }
                _ => return true,
            }
        }
        false
    }

    /// True when it holds more than may be carried.
    pub(crate) fn too_long(&self) -> bool {
        self.encoded.len() > MAX_CARRIED
    }

    /// The bytes the block encodes.
    pub(crate) fn decoded(&self) -> Vec<u8> {
        encoded::decode(&self.encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

    #[test]
    fn an_archive_cut_by_a_window_is_carried_to_its_block_end() {
        let mut archive = b"PK\x03\x04".to_vec();
        archive.extend((0..3000u32).flat_map(|n| n.to_le_bytes()));
        let lines: String = STANDARD
            .encode(&archive)
            .as_bytes()
            .chunks(76)
            .map(|l| format!("{}\r\n", String::from_utf8_lossy(l)))
            .collect();
        let mail = format!(
            "--b1\r\nContent-Disposition: attachment; filename=\"backup.zip\"\r\n\r\n{lines}--b1--\r\n"
        );
        // Cut at every place of a line: the archive is carried whole.
        let end = mail.find("--b1--").expect("end");
        for cut in end - 900..end - 820 {
            let mut carried = Carried::starting(&mail[..cut], false).expect("carried");
            assert_eq!(carried.name, "backup.zip");
            assert!(carried.feed(&mail.as_bytes()[cut..]));
            assert_eq!(carried.decoded(), archive, "cut at {cut}");
        }
        assert!(Carried::starting("plain text that ends\n", false).is_none());
    }

    #[test]
    fn a_carried_block_stops_at_its_bound() {
        let line = format!("{}\r\n", "QUF1".repeat(19));
        let start = format!("UEsDBA{}\r\n{line}", "A".repeat(70));
        let mut carried = Carried::starting(&start, true).expect("carried");
        let chunk = line.repeat((1 << 20) / line.len());
        let mut fed = 0;
        while !carried.too_long() {
            assert!(!carried.feed(chunk.as_bytes()), "the block goes on");
            fed += chunk.len();
            assert!(
                fed <= MAX_CARRIED * 2,
                "never past its bound by more than a chunk"
            );
        }
        assert!(fed > MAX_CARRIED);
    }
}
