//! Archives opened to judge what they hold: zip and the formats built on it (EPUB, Office
//! packages and their embedded files, OpenDocument, jar), each member handed to the judge under
//! its path (`backup.zip/.ssh/id_rsa`). Bounds: members, and bytes expanded (a bomb is not read
//! past them, and the archive is then not judged). Compressed formats that are not opened are named by [`unopened_format`].

use std::io::{Read, Seek};

use crate::{Findings, files};

/// Members an archive may hold.
const MAX_MEMBERS: usize = 100_000;
/// Bytes an archive or a compressed stream may expand to, at least: more when it is large
/// ([`EXPANSION`] times its size).
pub(crate) const MIN_EXPANDED: u64 = 64 << 20;
/// Times its own size an archive or a compressed stream, or a member its compressed size, may
/// expand to: ordinary ones stay far below (Office files, logs: tens), a bomb goes far past (a
/// thousand).
pub(crate) const EXPANSION: u64 = 200;
/// Bytes an archive may expand to, at most.
const MAX_EXPANDED: u64 = 4 << 30;
/// Bytes a member may hold whatever its ratio.
const SMALL_MEMBER: u64 = 1 << 20;

/// Whether a file starting with `start` is a zip archive (or a format built on it).
pub fn is_archive(start: &[u8]) -> bool {
    start.starts_with(b"PK\x03\x04") || start.starts_with(b"PK\x05\x06")
}

/// The compressed format, not opened, that a file starting with `start` is in, in words.
pub(crate) fn unopened_format(start: &[u8]) -> Option<&'static str> {
    const FORMATS: &[(&[u8], &str)] = &[
        (b"7z\xBC\xAF\x27\x1C", "a 7-Zip archive"),
        (b"Rar!\x1A\x07", "a RAR archive"),
        (b"\xFD7zXZ\x00", "an xz file"),
        (b"\x28\xB5\x2F\xFD", "a zstd file"),
        (b"MSCF\x00\x00\x00\x00", "a cabinet archive"),
    ];
    if start.len() >= 10 && start.starts_with(b"BZh") && &start[4..10] == b"1AY&SY" {
        return Some("a bzip2 file");
    }
    FORMATS
        .iter()
        .find(|(magic, _)| start.starts_with(magic))
        .map(|(_, format)| *format)
}

/// Why an archive could not be opened at all.
#[derive(Debug)]
pub(crate) struct NotOpened(pub String);

/// Bytes an archive may still expand to.
pub(crate) struct Expansion {
    left: u64,
}

impl Expansion {
    /// Takes `n` bytes of what is left; false when there are not as many.
    pub(crate) fn take(&mut self, n: usize) -> bool {
        let n = n as u64;
        let ok = n <= self.left;
        self.left = self.left.saturating_sub(n);
        ok
    }
}

/// A member of an archive, for the judge: its path (`backup.zip/.ssh/id_rsa`), its bytes.
pub(crate) type JudgeMember<'j> = dyn FnMut(&str, &mut dyn Read, &mut Expansion) -> Findings + 'j;

/// Opens the zip archive `reader` at `path` and has `judge` judge each member (a credential by
/// its name alone is not read), until one holds a credential or could not be read.
pub(crate) fn members<R: Read + Seek>(
    mut reader: R,
    path: &str,
    budget: Option<&mut Expansion>,
    judge: &mut JudgeMember<'_>,
) -> Result<Findings, NotOpened> {
    let size = reader
        .seek(std::io::SeekFrom::End(0))
        .map_err(|e| NotOpened(e.to_string()))?;
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| NotOpened(e.to_string()))?;
    if archive.len() > MAX_MEMBERS {
        return Ok(Findings::unread(format!(
            "is an archive of {} members, more than the {MAX_MEMBERS} Quarry opens",
            archive.len()
        )));
    }
    let mut findings = Findings::clear();
    // An archive on its own may expand to so much; one inside another draws on the outer's.
    let mut own = Expansion {
        left: size
            .saturating_mul(EXPANSION)
            .clamp(MIN_EXPANDED, MAX_EXPANDED),
    };
    let budget = budget.unwrap_or(&mut own);
    for index in 0..archive.len() {
        let name = archive.name_for_index(index).unwrap_or("").to_owned();
        if let Some(rule) = files::by_name(&name) {
            findings.credential_file = Some(rule);
            return Ok(findings);
        }
        let mut member = match archive.by_index(index) {
            Ok(member) if member.is_dir() => continue,
            Ok(member)
                if member.size() > SMALL_MEMBER
                    && member.size() > member.compressed_size().saturating_mul(EXPANSION) =>
            {
                return Ok(Findings::unread(format!(
                    "is an archive whose member {name} expands {} times: a bomb, not opened",
                    member.size() / member.compressed_size().max(1)
                )));
            }
            Ok(member) => member,
            Err(e) => {
                return Ok(Findings::unread(format!(
                    "holds a member it cannot open ({name}): {e}"
                )));
            }
        };
        findings.absorb(judge(&format!("{path}/{name}"), &mut member, budget));
        if !findings.is_clear() {
            return Ok(findings);
        }
    }
    Ok(findings)
}

/// Reads into `buffer` until it is full or `reader` ends.
pub(crate) fn read_full(reader: &mut dyn Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
