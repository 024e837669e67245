//! The names of a tar archive's members, read from their headers as the stream goes by: a
//! member named as a credential (`.ssh/id_rsa`, `backup.p12`) makes the archive one, whatever
//! its bytes look like. What the members hold is judged as the archive's own text (tar does not
//! compress).

use crate::{Rule, files};

/// Bytes of a tar header block.
const BLOCK: usize = 512;

/// Whether a file starting with `start` is a POSIX or GNU tar archive (`ustar` at 257).
pub(crate) fn is_tar(start: &[u8]) -> bool {
    start.get(257..262) == Some(b"ustar".as_slice())
}

/// Where the next header of a tar stream is, and what of it was read.
pub(crate) struct TarNames {
    /// The offset of the next header; `None` once the archive's end was read.
    next: Option<u64>,
    header: Vec<u8>,
}

impl TarNames {
    pub(crate) fn new() -> TarNames {
        TarNames {
            next: Some(0),
            header: Vec::with_capacity(BLOCK),
        }
    }

    /// Reads the headers in `data`, the stream's bytes from `offset`: the rule of the first
    /// member named as a credential.
    pub(crate) fn feed(&mut self, offset: u64, data: &[u8]) -> Option<Rule> {
        let end = offset + data.len() as u64;
        loop {
            let at = self.next? + self.header.len() as u64;
            if at >= end || at < offset {
                return None;
            }
            let from = usize::try_from(at - offset).ok()?;
            let take = (BLOCK - self.header.len()).min(data.len() - from);
            self.header.extend_from_slice(&data[from..from + take]);
            if self.header.len() < BLOCK {
                return None;
            }
            let header = std::mem::take(&mut self.header);
            if header.iter().all(|&b| b == 0) {
                self.next = None;
                return None;
            }
            let size = octal(&header[124..136]);
            let blocks = size.div_ceil(BLOCK as u64).saturating_add(1);
            self.next = self.next?.checked_add(blocks.saturating_mul(BLOCK as u64));
            let name = name(&header);
            if let Some(rule) = files::by_name(&name) {
                return Some(rule);
            }
        }
    }
}

/// A member's name: the ustar prefix (345..500) and the name (0..100).
fn name(header: &[u8]) -> String {
    let field = |bytes: &[u8]| {
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    };
    let (prefix, name) = (field(&header[345..500]), field(&header[..100]));
    if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    }
}

/// A size field: octal digits, or GNU's base-256 form (its first byte's high bit set).
fn octal(field: &[u8]) -> u64 {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        return field[1..].iter().fold(0u64, |n, &b| {
            n.saturating_mul(256).saturating_add(u64::from(b))
        });
    }
    field
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(*b))
        .fold(0u64, |n, &b| {
            n.saturating_mul(8).saturating_add(u64::from(b - b'0'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar header for `name` of `size` bytes.
    fn header(name: &str, size: usize) -> Vec<u8> {
        let mut h = vec![0u8; BLOCK];
        h[..name.len()].copy_from_slice(name.as_bytes());
        let size = format!("{size:011o}\0");
        h[124..136].copy_from_slice(size.as_bytes());
        h[257..262].copy_from_slice(b"ustar");
        h
    }

    #[test]
    fn a_member_named_as_a_credential_is_found_across_chunks() {
        let mut tar = header("notes/readme.txt", 600);
        tar.extend(vec![b'x'; 1024]);
        tar.extend(header("backup/.ssh/id_ed25519", 10));
        tar.extend(vec![b'y'; 512]);
        tar.extend(vec![0u8; 1024]);
        assert!(is_tar(&tar));
        let mut names = TarNames::new();
        let mut found = None;
        for (n, chunk) in tar.chunks(300).enumerate() {
            found = found.or(names.feed((n * 300) as u64, chunk));
        }
        assert_eq!(found.map(|r| r.id), Some("ssh-private-key-file"));
        let mut clean = TarNames::new();
        assert_eq!(clean.feed(0, &tar[..1536]), None);
    }
}
