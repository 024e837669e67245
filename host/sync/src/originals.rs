//! Judging a document's original file, the bytes a download serves: every byte is read through
//! the plugin, a chunk at a time (never held whole), hashed, and judged by the credential
//! detector's [`FileScan`] (windows of a chunk and the end of the one before, each within its own
//! time budget: time per megabyte, not a cap on size). Where a chunk is byte for byte the text
//! the sync already judged at the same place (a plain text file), it is not scanned twice. A zip
//! archive (and EPUB, Office, OpenDocument files) is then opened and each member judged, and read
//! whole once more to be sure the bytes judged are still the file's. The answer is the file's
//! fingerprint (its size and SHA-256), which a download checks the file against, or why it could
//! not be judged.
//!
//! The same reading checks what a download is about to serve ([`verify`]).

use std::io::{BufReader, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, Ordering};

use quarry_core::DocId;
use quarry_credentials::{FileScan, Findings, is_archive, judge_archive};
use quarry_runtime::{GuestError, RuntimeError, Session};
use quarry_store::{Fingerprint, Original, is_quarry_database};
use sha2::{Digest, Sha256};

use crate::SyncError;
use crate::credentials::OriginalVerdict;

/// Bytes asked of the plugin per call (its limit for one chunk).
pub const CHUNK_BYTES: u32 = 1 << 20;

/// A document's file as the plugin knows it, and how it is named for the rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileRef<'a> {
    pub id: &'a DocId,
    pub locator: &'a str,
    /// Its path (or title): the name rules, and code told from prose.
    pub path: &'a str,
}

/// Judges `file`'s original: reads it whole through `session`, scanning what `text` (the text
/// already judged, as fetched) does not hold at the same place, then opens it when it is an
/// archive. Stops at the first finding (the document is then held back or redacted, and its file
/// never served). An error only when the sync is asked to stop.
pub(crate) fn judge(
    session: &mut Session,
    file: FileRef<'_>,
    text: &str,
    stop: &AtomicBool,
) -> Result<OriginalVerdict, SyncError> {
    let mut verdict = OriginalVerdict::default();
    let mut hasher = Sha256::new();
    let mut scan = FileScan::new(file.path);
    let mut archive = false;
    let read = read_all(session, file, stop, |offset, data| {
        if offset == 0 {
            verdict.quarry_database = is_quarry_database(data);
            archive = is_archive(data);
        }
        hasher.update(data);
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let judged = text.as_bytes().get(start..start.saturating_add(data.len())) == Some(data);
        scan.feed(data, judged)?;
        Ok(!scan.found() && !verdict.quarry_database)
    });
    let size = match read {
        Ok(Read::Whole(size)) => size,
        Ok(Read::Stopped) => return Ok(found(verdict, scan.findings())),
        Ok(Read::Changed) => return Ok(changed()),
        Err(ReadError::Stop) => return Err(SyncError::Stopped),
        Err(ReadError::Failed(why)) => {
            // What was found before the read failed counts.
            let findings = scan.findings();
            return Ok(if findings.found() {
                found(verdict, findings)
            } else {
                OriginalVerdict::unjudged(why)
            });
        }
    };
    let fingerprint = Fingerprint {
        size,
        sha256: hasher.finalize().into(),
    };
    let mut findings = scan.findings();
    if archive && findings.is_clear() {
        findings = judge_members(session, file, fingerprint, stop)?;
    }
    if findings.found() {
        return Ok(found(verdict, findings));
    }
    if let Some(why) = findings.unread {
        return Ok(OriginalVerdict::unjudged(why));
    }
    verdict.original = Original::Judged(fingerprint);
    Ok(verdict)
}

/// The verdict on a file in which `findings` found a credential.
fn found(mut verdict: OriginalVerdict, findings: Findings) -> OriginalVerdict {
    verdict.credential_file = findings.credential_file;
    verdict.rules = findings.rules;
    verdict
}

/// The verdict on a file that changed while it was judged.
fn changed() -> OriginalVerdict {
    let mut verdict = OriginalVerdict::unjudged(
        "changed while it was checked for credentials: checked again at the next sync".to_owned(),
    );
    verdict.changed = true;
    verdict
}

/// Judges the members of the archive `file`, whose bytes were judged as `fingerprint`; then reads
/// it whole again, so that what was opened is the file judged (else it changed meanwhile).
fn judge_members(
    session: &mut Session,
    file: FileRef<'_>,
    fingerprint: Fingerprint,
    stop: &AtomicBool,
) -> Result<Findings, SyncError> {
    let reader = PluginReader {
        session: &mut *session,
        file,
        size: fingerprint.size,
        position: 0,
        stop,
    };
    let findings = judge_archive(
        BufReader::with_capacity(CHUNK_BYTES as usize, reader),
        file.path,
    );
    if stop.load(Ordering::Relaxed) {
        return Err(SyncError::Stopped);
    }
    let mut hasher = Sha256::new();
    let again = read_all(session, file, stop, |_, data| {
        hasher.update(data);
        Ok(true)
    });
    let same = matches!(again, Ok(Read::Whole(size)) if size == fingerprint.size)
        && <[u8; 32]>::from(hasher.finalize()) == fingerprint.sha256;
    match again {
        Err(ReadError::Stop) => Err(SyncError::Stopped),
        _ if same => Ok(findings),
        _ => Ok(Findings {
            complete: true,
            unread: Some(
                "changed while it was checked for credentials: checked again at the next sync"
                    .to_owned(),
            ),
            ..Findings::default()
        }),
    }
}

/// A file read through its plugin as `Read + Seek`, for an archive's reader.
struct PluginReader<'s, 'f> {
    session: &'s mut Session,
    file: FileRef<'f>,
    size: u64,
    position: u64,
    stop: &'s AtomicBool,
}

impl std::io::Read for PluginReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(std::io::Error::other("the sync is stopping"));
        }
        if self.position >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let want = u32::try_from(buf.len())
            .unwrap_or(CHUNK_BYTES)
            .min(CHUNK_BYTES);
        let chunk = self
            .session
            .read_file(self.file.id, self.file.locator, self.position, want)
            .map_err(|e| std::io::Error::other(unreadable(&e)))?;
        if chunk.total_size != self.size {
            return Err(std::io::Error::other("the file changed while it was read"));
        }
        let n = chunk.data.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk.data[..n]);
        self.position += n as u64;
        Ok(n)
    }
}

impl Seek for PluginReader<'_, '_> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let position = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::End(delta) => self.size.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
        };
        self.position = position.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.position)
    }
}

/// For a document whose credentials are not checked (the check is off, or its path released):
/// only whether its file is a copy of Quarry's database, which is left out whatever the policy,
/// from its first bytes.
pub(crate) fn header(session: &mut Session, file: FileRef<'_>) -> OriginalVerdict {
    let quarry_database = session
        .read_file(file.id, file.locator, 0, 100)
        .is_ok_and(|chunk| is_quarry_database(&chunk.data));
    OriginalVerdict {
        original: Original::Unchecked,
        quarry_database,
        ..OriginalVerdict::default()
    }
}

/// How a whole read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// Every byte was read: the file's size.
    Whole(u64),
    /// The visitor asked to stop.
    Stopped,
    /// The file's size changed while it was read.
    Changed,
}

/// Why a whole read did not end.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The sync (or the server) is stopping.
    Stop,
    /// The plugin could not read it, or the visitor found it could not go on: why, for the
    /// user.
    Failed(String),
}

/// Reads `file` from its start to its end through `session`, a chunk at a time, handing each
/// chunk and its offset to `visit`, which answers whether to go on (or why it cannot).
pub(crate) fn read_all(
    session: &mut Session,
    file: FileRef<'_>,
    stop: &AtomicBool,
    mut visit: impl FnMut(u64, &[u8]) -> Result<bool, String>,
) -> Result<Read, ReadError> {
    let mut offset = 0u64;
    let mut size = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(ReadError::Stop);
        }
        let chunk = session
            .read_file(file.id, file.locator, offset, CHUNK_BYTES)
            .map_err(|e| ReadError::Failed(unreadable(&e)))?;
        if *size.get_or_insert(chunk.total_size) != chunk.total_size {
            return Ok(Read::Changed);
        }
        if chunk.data.is_empty() {
            return Ok(if offset == chunk.total_size {
                Read::Whole(offset)
            } else {
                Read::Changed
            });
        }
        if !visit(offset, &chunk.data).map_err(ReadError::Failed)? {
            return Ok(Read::Stopped);
        }
        offset += chunk.data.len() as u64;
        if offset > chunk.total_size {
            return Ok(Read::Changed);
        }
        if offset == chunk.total_size {
            return Ok(Read::Whole(offset));
        }
    }
}

/// Why a file could not be read to judge it, for the user.
fn unreadable(e: &RuntimeError) -> String {
    match e.guest_error() {
        Some(GuestError::NotFound(_)) => {
            "could not be checked for credentials: its file is gone".to_owned()
        }
        _ => format!("could not be read to check it for credentials: {e}"),
    }
}

/// What a download may serve of a document, by the connector's policy and what was judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Serving {
    /// The file as it is: the connector's check is off, or the user released its path.
    AsItIs,
    /// The file, only while it is the one judged: its fingerprint.
    IfUnchanged(Fingerprint),
    /// Nothing: why, in words an integration may read.
    Refused(&'static str),
}

/// Why a redacted document's file is not served.
pub const REFUSED_REDACTED: &str = "this document's original file is not served: it holds credentials, which its indexed text has redacted (read the text with GET .../docs/{doc_id})";
/// Why a file not judged yet is not served.
pub const REFUSED_PENDING: &str = "this document's original file is not served yet: it has not been checked for credentials; it is served once checked (within minutes of the service's start)";
/// Why a file that could not be judged is not served.
pub const REFUSED_UNJUDGED: &str = "this document's original file is not served: it could not be checked for credentials (the user sees why, and can release it)";
/// Why a file that changed since it was judged is not served.
pub const REFUSED_CHANGED: &str = "this document's original file changed since it was checked for credentials: it is served again once the next sync has checked it";

/// What a download may serve of `doc` (not held back) under `policy`.
pub fn serving(policy: &quarry_store::CredentialPolicy, doc: &quarry_store::CatalogDoc) -> Serving {
    if doc.redacted {
        return Serving::Refused(REFUSED_REDACTED);
    }
    let path = doc.meta.path.as_deref().unwrap_or(&doc.meta.title);
    if policy.mode == quarry_store::CredentialMode::Off
        || crate::credentials::is_released(&policy.released, path)
    {
        return Serving::AsItIs;
    }
    match &doc.original {
        Original::Judged(fingerprint) => Serving::IfUnchanged(*fingerprint),
        // Judged without a check that is now on: the next sync (asked for by the change of
        // policy) judges it.
        Original::Pending | Original::Unchecked => Serving::Refused(REFUSED_PENDING),
        Original::Unjudged(_) => Serving::Refused(REFUSED_UNJUDGED),
    }
}

/// The hashes of a download's chunks, taken on a first read of the whole file that checked it
/// against its fingerprint: the second read, which serves, sends a chunk only when it hashes the
/// same, so every byte served is a byte judged.
#[derive(Debug, Clone, Default)]
pub struct Verified {
    chunks: Vec<[u8; 32]>,
}

impl Verified {
    /// True when `data`, the `n`th chunk of the range served, is the one verified.
    pub fn matches(&self, n: usize, data: &[u8]) -> bool {
        self.chunks
            .get(n)
            .is_some_and(|hash| *hash == <[u8; 32]>::from(Sha256::digest(data)))
    }
}

/// Reads `doc`'s file whole through `session` and checks it is the one judged (`fingerprint`),
/// keeping the hash of each chunk of `chunk_bytes` of the range `start..start + length`, as the
/// download will read them. `Err` with words for an integration when it is not (changed, gone,
/// unreadable); the reason for the log comes with it.
pub fn verify(
    session: &mut Session,
    (id, locator): (&DocId, &str),
    fingerprint: &Fingerprint,
    (start, length): (u64, u64),
    chunk_bytes: u32,
) -> Result<Verified, (&'static str, String)> {
    let never = AtomicBool::new(false);
    let file = FileRef {
        id,
        locator,
        path: "",
    };
    let end = start.saturating_add(length);
    let mut hasher = Sha256::new();
    let mut verified = Verified::default();
    // The bytes of the range's current chunk, until it is whole.
    let mut part: Vec<u8> = Vec::new();
    let read = read_all(session, file, &never, |offset, data| {
        hasher.update(data);
        let from = start.max(offset);
        let to = end.min(offset + data.len() as u64);
        let mut at = from;
        while at < to {
            let taken = usize::try_from(at - offset).unwrap_or(usize::MAX);
            let room = chunk_bytes as usize - part.len();
            let n = room.min(usize::try_from(to - at).unwrap_or(usize::MAX));
            part.extend_from_slice(&data[taken..taken + n]);
            at += n as u64;
            if part.len() == chunk_bytes as usize || at == end {
                verified.chunks.push(Sha256::digest(&part).into());
                part.clear();
            }
        }
        Ok(true)
    });
    match read {
        Ok(Read::Whole(size))
            if size == fingerprint.size
                && <[u8; 32]>::from(hasher.finalize()) == fingerprint.sha256 =>
        {
            Ok(verified)
        }
        Ok(_) => Err((REFUSED_CHANGED, "the file is not the one judged".to_owned())),
        Err(ReadError::Failed(why)) => Err((REFUSED_CHANGED, why)),
        Err(ReadError::Stop) => Err((REFUSED_CHANGED, "stopped".to_owned())),
    }
}

/// Why a file was not read whole for a preview: over `max` bytes, for an integration.
pub const REFUSED_TOO_LARGE: &str = "this document's file is too large to draw a preview of";

/// Reads `doc`'s file whole into memory, at most `max` bytes, as `serving` allows: the file as
/// it is, or only the very file judged for credentials (its size and SHA-256). `Err` with words
/// for an integration when it may not be served, changed, is gone or is too large; the reason
/// for the log comes with it.
pub fn served_bytes(
    session: &mut Session,
    (id, locator): (&DocId, &str),
    serving: &Serving,
    max: u64,
) -> Result<Vec<u8>, (&'static str, String)> {
    if let Serving::Refused(why) = serving {
        return Err((why, "refused".to_owned()));
    }
    let never = AtomicBool::new(false);
    let file = FileRef {
        id,
        locator,
        path: "",
    };
    let mut bytes = Vec::new();
    let read = read_all(session, file, &never, |_, data| {
        if bytes.len() as u64 + data.len() as u64 > max {
            return Ok(false);
        }
        bytes.extend_from_slice(data);
        Ok(true)
    });
    match read {
        Ok(Read::Whole(_)) => {}
        Ok(Read::Stopped) => return Err((REFUSED_TOO_LARGE, format!("over {max} bytes"))),
        Ok(Read::Changed) => return Err((REFUSED_CHANGED, "changed while read".to_owned())),
        Err(ReadError::Failed(why)) => return Err((REFUSED_CHANGED, why)),
        Err(ReadError::Stop) => return Err((REFUSED_CHANGED, "stopped".to_owned())),
    }
    if let Serving::IfUnchanged(fingerprint) = serving {
        let judged = bytes.len() as u64 == fingerprint.size
            && <[u8; 32]>::from(Sha256::digest(&bytes)) == fingerprint.sha256;
        if !judged {
            return Err((REFUSED_CHANGED, "the file is not the one judged".to_owned()));
        }
    }
    Ok(bytes)
}
