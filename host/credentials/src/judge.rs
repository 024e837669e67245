//! The judge, which ties the detector's parts together: a text is scanned by the rules
//! (`scan`), what it holds in other forms is read as views (`views`), a view's bytes are judged
//! as a file (`stream`), an archive's members likewise (`archive`), to a bounded depth and within
//! the scan's time.

use std::io::{Cursor, Read, Seek};
use std::time::{Duration, Instant};

use crate::archive::{self, Expansion, NotOpened};
use crate::stream::FileScan;
use crate::{Detector, Findings, MAX_DEPTH, Readers, Scan, Subject, Within};

/// Bytes of a member read at a time.
const READ_BYTES: usize = 1 << 20;
/// Bytes an archive inside an archive may hold to be opened (it is read whole).
const MAX_NESTED: usize = 64 << 20;

impl Detector {
    /// Scans `subject` within `budget`: whether it is a credential file, and the secrets its
    /// text holds, also quoted, joined or encoded. A scan that runs out of time, or finds more
    /// than it keeps, is incomplete.
    pub fn scan(&self, subject: &Subject<'_>, budget: Duration) -> Scan {
        let within = Within {
            deadline: Instant::now() + budget,
            depth: 0,
        };
        self.scan_within(subject, within, READERS)
    }
}

impl FileScan {
    /// Judging the file at `path` (its name counts: `id_rsa`, `.p12`).
    pub fn new(path: &str) -> FileScan {
        FileScan::with(path, None, READERS)
    }
}

fn read_text(subject: &Subject<'_>, within: Within) -> Scan {
    Detector::shared().scan_within(subject, within, READERS)
}

/// How texts, a file's windows and the files found in them are judged.
const READERS: Readers = Readers {
    text: read_text,
    file: judge_bytes,
};

/// Judges `bytes`, a whole file found inside a text (a decoded attachment) named `name`: an
/// archive is opened, anything else judged as a file. An archive cut short (a window of a
/// longer file ended inside its block, which the file's [`FileScan`] carries on to judge whole)
/// is judged as the bytes it is.
fn judge_bytes(name: &str, bytes: &[u8], within: Within) -> Findings {
    if archive::is_archive(bytes)
        && let Ok(findings) = judge_zip(Cursor::new(bytes), name, within, None)
    {
        return findings;
    }
    let mut scan = FileScan::with(name, Some(within), READERS);
    // A window out of time is recorded in the findings.
    let _ = scan.feed(bytes, false);
    scan.findings()
}

/// Judges the zip archive `reader` at `path`: every member, by its name and its bytes, archives
/// inside to a bounded depth. What could not be read (an encrypted member, a bomb, a broken
/// archive) is in the findings' `unread`.
pub fn judge_archive<R: Read + Seek>(reader: R, path: &str) -> Findings {
    // Each window of a member has its own time budget.
    judge_zip(reader, path, Within::untimed(0), None).unwrap_or_else(|NotOpened(why)| {
        Findings::unread(format!("could not be opened as an archive: {why}"))
    })
}

/// [`judge_archive`] within `within` (a text's time, the depth reached), drawing on `budget`
/// when it is inside another archive.
fn judge_zip<R: Read + Seek>(
    reader: R,
    path: &str,
    within: Within,
    budget: Option<&mut Expansion>,
) -> Result<Findings, NotOpened> {
    let inner = within.deeper();
    archive::members(reader, path, budget, &mut |member_path, member, budget| {
        judge_member(member, member_path, inner, budget)
    })
}

/// Judges one member, streamed through a [`FileScan`]; an archive inside is opened when the
/// depth allows and it is small enough to hold, on the same budget.
fn judge_member(
    member: &mut dyn Read,
    path: &str,
    within: Within,
    budget: &mut Expansion,
) -> Findings {
    let mut scan = FileScan::with(path, Some(within), READERS);
    let mut buffer = vec![0u8; READ_BYTES];
    let mut held: Option<Vec<u8>> = None;
    loop {
        let n = match archive::read_full(member, &mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                return Findings::unread(format!("holds a member it cannot read ({path}): {e}"));
            }
        };
        if !budget.take(n) {
            return Findings::unread(format!(
                "is an archive that expands past what Quarry opens (at {path}): a bomb, or too large to check"
            ));
        }
        let chunk = &buffer[..n];
        if scan.offset() == 0 && held.is_none() && archive::is_archive(chunk) {
            if within.depth >= MAX_DEPTH {
                return Findings::unread(format!(
                    "holds archives nested deeper than Quarry opens ({path})"
                ));
            }
            held = Some(Vec::new());
        }
        if let Some(whole) = held.as_mut() {
            if whole.len() + n > MAX_NESTED {
                return Findings::unread(format!(
                    "holds an archive too large to open inside another ({path})"
                ));
            }
            whole.extend_from_slice(chunk);
            continue;
        }
        if scan.feed(chunk, false).is_err() || scan.found() {
            return scan.findings();
        }
    }
    match held {
        Some(whole) => judge_zip(Cursor::new(whole), path, within, Some(budget)).unwrap_or_else(
            |NotOpened(why)| {
                Findings::unread(format!("holds an archive it cannot open ({path}): {why}"))
            },
        ),
        None => scan.findings(),
    }
}
