//! Judging a file's bytes as they stream by: a chunk at a time (never held whole), in windows
//! of a chunk and the end of the one before (so a secret across two chunks is seen), each window
//! within its own time budget, time per megabyte rather than a cap on size. A file that starts
//! with a UTF-16 byte order mark is read as UTF-16, anything else as UTF-8 with what is not
//! UTF-8 replaced (a binary file is read for the text it holds). A gzip stream is decompressed
//! as it goes and its contents judged as the file they are (a tar archive's member names too);
//! compressed formats that are not opened are named, so the caller does not take them as
//! judged.

use std::time::Instant;

use crate::carried::Carried;
use crate::gunzip::{Gunzip, is_gzip};
use crate::tar::{TarNames, is_tar};
use crate::{Findings, MAX_DEPTH, Readers, Subject, Within, archive, budget};

/// Bytes of the previous chunk scanned again with the next: longer than any secret the rules
/// find (an RSA key of 8,192 bits is about 6.5 KB of PEM).
const OVERLAP_BYTES: usize = 64 << 10;

/// How a file's bytes become text for the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Utf8,
    Utf16Le,
    Utf16Be,
}

impl Encoding {
    /// From the file's first bytes: a UTF-16 byte order mark, else UTF-8.
    fn sniff(start: &[u8]) -> Encoding {
        match start {
            [0xFF, 0xFE, ..] => Encoding::Utf16Le,
            [0xFE, 0xFF, ..] => Encoding::Utf16Be,
            _ => Encoding::Utf8,
        }
    }

    fn decode(self, bytes: &[u8]) -> String {
        let units = |from: fn([u8; 2]) -> u16| {
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|pair| from([pair[0], pair[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        };
        match self {
            Encoding::Utf8 => String::from_utf8_lossy(bytes).into_owned(),
            Encoding::Utf16Le => units(u16::from_le_bytes),
            Encoding::Utf16Be => units(u16::from_be_bytes),
        }
    }
}

/// A file being judged, chunk by chunk.
pub struct FileScan {
    path: String,
    within: Option<Within>,
    readers: Readers,
    encoding: Encoding,
    offset: u64,
    /// The end of the previous chunk, scanned again with the next one.
    tail: Vec<u8>,
    /// Whether the previous chunk was text already judged (then a window needs no context
    /// from it).
    previous_judged: bool,
    findings: Findings,
    /// A gzip file's contents, judged as the file they are.
    inflated: Option<Box<Inflated>>,
    /// A tar archive's member names.
    tar: Option<TarNames>,
    /// An encoded archive a window ended inside, carried to its end.
    carried: Option<Carried>,
}

/// A gzip stream and the judging of what it holds.
struct Inflated {
    gunzip: Gunzip,
    scan: FileScan,
}

impl FileScan {
    /// Judging a file at `path` (its name counts: `id_rsa`, `.p12`), within `within`'s time
    /// and depth when it comes from a text being scanned, each window read by `readers`.
    pub(crate) fn with(path: &str, within: Option<Within>, readers: Readers) -> FileScan {
        FileScan {
            path: path.to_owned(),
            within,
            readers,
            encoding: Encoding::Utf8,
            offset: 0,
            tail: Vec::new(),
            previous_judged: true,
            findings: Findings::clear(),
            inflated: None,
            tar: None,
            carried: None,
        }
    }

    /// Judges the file's next chunk, `data`; `judged` when it is, byte for byte, text already
    /// judged at the same place (it is then only context for the next window). `Err` with why,
    /// for the user, when a window could not be judged in time and nothing was found.
    pub fn feed(&mut self, data: &[u8], judged: bool) -> Result<(), String> {
        let start = self.offset;
        if start == 0 {
            self.open(data);
        }
        if let Some(rule) = self.tar.as_mut().and_then(|tar| tar.feed(start, data)) {
            self.findings.credential_file.get_or_insert(rule);
        }
        if let Some(inflated) = self.inflated.as_mut() {
            self.offset += data.len() as u64;
            match inflated.gunzip.push(data) {
                Ok(out) => return inflated.judge(&out),
                Err(why) => {
                    self.findings.unread.get_or_insert(why);
                    return Ok(());
                }
            }
        }
        self.carry_on(data);
        if !(judged && self.previous_judged) {
            self.scan_window(data, start)?;
        }
        self.previous_judged = judged;
        self.tail.extend_from_slice(data);
        let over = self.tail.len().saturating_sub(OVERLAP_BYTES);
        self.tail.drain(..over);
        self.offset += data.len() as u64;
        Ok(())
    }

    /// Scans the window of the tail and `data` (which starts at `start`), and starts carrying
    /// an encoded archive the window ends inside.
    fn scan_window(&mut self, data: &[u8], start: u64) -> Result<(), String> {
        let mut window = Vec::with_capacity(self.tail.len() + data.len());
        window.extend_from_slice(&self.tail);
        window.extend_from_slice(data);
        // UTF-16 is read in whole units, counted from the file's start.
        let skew = match self.encoding {
            Encoding::Utf8 => 0,
            _ => usize::try_from(start.wrapping_sub(self.tail.len() as u64) & 1).unwrap_or(0),
        };
        let text = self.encoding.decode(&window[skew.min(window.len())..]);
        let own = Instant::now() + budget(text.len());
        let within = match self.within {
            Some(outer) => Within {
                deadline: outer.deadline.min(own),
                depth: outer.depth,
            },
            None => Within {
                deadline: own,
                depth: 0,
            },
        };
        let scan = (self.readers.text)(
            &Subject {
                path: &self.path,
                text: &text,
            },
            within,
        );
        self.findings.absorb(Findings {
            credential_file: scan.credential_file,
            rules: scan.rules(),
            complete: true,
            unread: scan.unread.clone(),
        });
        // What a scan found counts even when it ran out of time.
        if !scan.complete && !self.findings.found() {
            self.findings.complete = false;
            return Err(format!(
                "could not be checked for credentials in time (at {} MiB of it)",
                start >> 20
            ));
        }
        if self.carried.is_none() {
            self.carried = Carried::starting(&text, start == 0);
        }
        Ok(())
    }

    /// Carries an encoded archive on through `data`; judges it once its block ends.
    fn carry_on(&mut self, data: &[u8]) {
        let Some(carried) = self.carried.as_mut() else {
            return;
        };
        let ended = carried.feed(data);
        if carried.too_long() {
            self.carried = None;
            self.findings.unread.get_or_insert(
                "holds an encoded archive too large to open (over 48 MiB)".to_owned(),
            );
        } else if ended {
            self.judge_carried();
        }
    }

    /// Judges the carried archive as the file it is.
    fn judge_carried(&mut self) {
        let Some(carried) = self.carried.take() else {
            return;
        };
        let within = self.within.unwrap_or_else(|| Within::untimed(0)).deeper();
        let found = (self.readers.file)(&carried.name, &carried.decoded(), within);
        self.findings.absorb(found);
    }

    /// Reads what the file's first bytes say it is: its encoding, gzip (then judged as what it
    /// holds), tar (then its members' names judged too), or a compressed format not opened.
    fn open(&mut self, start: &[u8]) {
        self.encoding = Encoding::sniff(start);
        if is_tar(start) {
            self.tar = Some(TarNames::new());
        }
        let depth = self.within.map_or(0, |w| w.depth);
        if is_gzip(start) && depth >= MAX_DEPTH {
            self.findings.unread =
                Some("holds compressed data nested deeper than Quarry opens".to_owned());
        } else if is_gzip(start) {
            let inside = inside_gzip(&self.path);
            let within = match self.within {
                Some(outer) => outer.deeper(),
                None => Within::untimed(1),
            };
            self.inflated = Some(Box::new(Inflated {
                gunzip: Gunzip::new(),
                scan: FileScan::with(&inside, Some(within), self.readers),
            }));
        } else if let Some(format) = archive::unopened_format(start) {
            self.findings.unread = Some(format!(
                "is {format}, which Quarry does not open to check for credentials"
            ));
        }
    }

    /// True when something in it is a credential: the rest need not be read.
    pub fn found(&self) -> bool {
        self.findings.found() || self.inflated.as_ref().is_some_and(|i| i.scan.found())
    }

    /// Bytes judged so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// What was found (a gzip stream's end, and an encoded archive the file ends inside,
    /// judged first).
    pub fn findings(mut self) -> Findings {
        self.judge_carried();
        if let Some(inflated) = self.inflated.take() {
            let Inflated {
                mut gunzip,
                mut scan,
            } = *inflated;
            if !scan.found() {
                match gunzip.finish() {
                    Ok(out) => {
                        // Out of time is recorded in the inner findings.
                        let _ = judge_pieces(&mut scan, &out);
                    }
                    Err(why) => {
                        self.findings.unread.get_or_insert(why);
                    }
                }
            }
            self.findings.absorb(scan.findings());
        }
        self.findings
    }
}

impl Inflated {
    /// Judges `out`, what the stream gave.
    fn judge(&mut self, out: &[u8]) -> Result<(), String> {
        judge_pieces(&mut self.scan, out)
    }
}

/// Feeds `bytes` to `scan` a MiB at a time, until it finds something.
fn judge_pieces(scan: &mut FileScan, bytes: &[u8]) -> Result<(), String> {
    for piece in bytes.chunks(1 << 20) {
        scan.feed(piece, false)?;
        if scan.found() {
            break;
        }
    }
    Ok(())
}

/// The name of what a gzip file at `path` holds: `logs.tar` for `logs.tar.gz` and `logs.tgz`.
fn inside_gzip(path: &str) -> String {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".tgz") {
        format!("{}.tar", &path[..path.len() - 4])
    } else if lower.ends_with(".gz") {
        path[..path.len() - 3].to_owned()
    } else {
        path.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_files_are_read_as_text_and_others_as_utf8() {
        let token = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";
        let mut le = vec![0xFF, 0xFE];
        let mut be = vec![0xFE, 0xFF];
        for unit in token.encode_utf16() {
            le.extend_from_slice(&unit.to_le_bytes());
            be.extend_from_slice(&unit.to_be_bytes());
        }
        assert_eq!(Encoding::sniff(&le), Encoding::Utf16Le);
        assert_eq!(Encoding::sniff(&be), Encoding::Utf16Be);
        assert!(Encoding::Utf16Le.decode(&le[2..]).contains(token));
        assert!(Encoding::Utf16Be.decode(&be[2..]).contains(token));
        let binary = [0x89, b'P', b'N', b'G', 0xFF, b'g', b'h', b'p'];
        assert_eq!(Encoding::sniff(&binary), Encoding::Utf8);
        assert!(Encoding::Utf8.decode(&binary).ends_with("ghp"));
    }

    #[test]
    fn a_gzip_file_is_judged_as_what_it_holds_and_a_bomb_or_a_cut_stream_is_not() {
        use std::io::Write as _;
        let gzip = |bytes: &[u8]| {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(bytes).expect("in memory");
            encoder.finish().expect("in memory")
        };
        let token = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";
        let log = format!(
            "{}GITHUB_TOKEN={token}\n",
            "request served in 12 ms\n".repeat(100_000)
        );
        let compressed = gzip(log.as_bytes());
        let mut scan = FileScan::new("logs/app.log.gz");
        for chunk in compressed.chunks(4096) {
            scan.feed(chunk, false).expect("in time");
        }
        assert_eq!(scan.findings().rules[0].id, "github-token");

        let clean = gzip(b"nothing secret here\n");
        let mut scan = FileScan::new("notes.txt.gz");
        scan.feed(&clean, false).expect("in time");
        assert!(scan.findings().is_clear());

        let mut cut = FileScan::new("notes.txt.gz");
        cut.feed(&compressed[..compressed.len() / 2], false)
            .expect("in time");
        assert!(cut.findings().unread.is_some());

        let mut nested = compressed.clone();
        for _ in 0..4 {
            nested = gzip(&nested);
        }
        let mut deep = FileScan::new("logs.gz.gz.gz.gz.gz");
        deep.feed(&nested, false).expect("in time");
        let deep = deep.findings();
        assert!(!deep.found() && deep.unread.is_some(), "{deep:?}");

        let bomb = gzip(&vec![0u8; 300 << 20]);
        let mut scan = FileScan::new("zeros.gz");
        for chunk in bomb.chunks(1 << 20) {
            let _ = scan.feed(chunk, false);
        }
        let found = scan.findings();
        assert!(
            found
                .unread
                .as_deref()
                .is_some_and(|why| why.contains("a bomb")),
            "{found:?}"
        );
    }

    #[test]
    fn a_secret_across_two_chunks_is_found() {
        let token = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";
        let text = format!("{}{token} end", "x ".repeat(5000));
        let (first, second) = text.as_bytes().split_at(10_010);
        let mut scan = FileScan::new("notes.txt");
        scan.feed(first, false).expect("in time");
        assert!(!scan.found());
        scan.feed(second, false).expect("in time");
        assert_eq!(scan.findings().rules[0].id, "github-token");
    }
}
