//! The raw messages this instance fetched lately, by locator: the host reads each document's
//! original (`read-file`) right after its text to judge it for credentials, and a message
//! never changes under its UID, so the bytes just fetched answer without another trip to the
//! server. Bounded in count and bytes; the oldest go first.

use std::collections::VecDeque;

use quarry_sdk::FileChunk;

/// Messages kept at most.
const MAX_MESSAGES: usize = 128;
/// Bytes kept at most.
const MAX_BYTES: usize = 16 << 20;

/// Recently fetched messages.
#[derive(Default)]
pub struct Recent {
    messages: VecDeque<(String, Vec<u8>)>,
    bytes: usize,
}

impl Recent {
    /// Keeps the message at `locator` (unless it alone is over the bound).
    pub fn keep(&mut self, locator: &str, bytes: &[u8]) {
        if bytes.len() > MAX_BYTES || self.messages.iter().any(|(l, _)| l == locator) {
            return;
        }
        self.bytes += bytes.len();
        self.messages
            .push_back((locator.to_owned(), bytes.to_vec()));
        while self.messages.len() > MAX_MESSAGES || self.bytes > MAX_BYTES {
            match self.messages.pop_front() {
                Some((_, dropped)) => self.bytes -= dropped.len(),
                None => break,
            }
        }
    }

    /// Up to `max_bytes` of the message at `locator` from `offset`, if it is kept.
    pub fn chunk(&self, locator: &str, offset: u64, max_bytes: u32) -> Option<FileChunk> {
        let (_, bytes) = self.messages.iter().find(|(l, _)| l == locator)?;
        let start = usize::try_from(offset).ok()?.min(bytes.len());
        let end = start.saturating_add(max_bytes as usize).min(bytes.len());
        Some(FileChunk {
            data: bytes[start..end].to_vec(),
            total_size: bytes.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_messages_answer_ranges_and_the_oldest_go_first() {
        let mut recent = Recent::default();
        recent.keep("a", b"hello world");
        let chunk = recent.chunk("a", 6, 100).map(|c| (c.data, c.total_size));
        assert_eq!(chunk, Some((b"world".to_vec(), 11)));
        assert_eq!(recent.chunk("a", 50, 10).map(|c| c.data.len()), Some(0));
        for n in 0..MAX_MESSAGES {
            recent.keep(&format!("m{n}"), b"x");
        }
        assert!(recent.chunk("a", 0, 1).is_none(), "the oldest went");
        assert!(recent.chunk("m1", 0, 1).is_some());
        recent.keep("big", &vec![0; MAX_BYTES + 1]);
        assert!(recent.chunk("big", 0, 1).is_none(), "too large to keep");
    }
}
