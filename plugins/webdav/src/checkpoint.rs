//! What a listing's checkpoint keeps: where the walk stopped, and a fingerprint of what it has
//! listed so far (every file's path and version, in walk order). The fingerprint of a whole
//! walk is what `watch` compares a new walk with.

use crate::walk::Found;

/// The fingerprint of an empty walk (FNV-1a's offset basis).
const EMPTY: u64 = 0xcbf2_9ce4_8422_2325;

/// A listing's state, read from its checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checkpoint {
    /// No walk yet, or one that starts again.
    Start,
    /// A walk under way: the fingerprint so far, and the last folder listed whole.
    Walking { fingerprint: u64, after: String },
    /// A walk done, with its fingerprint.
    Done { fingerprint: u64 },
}

impl Checkpoint {
    /// The checkpoint the host passed (anything unreadable starts a new walk).
    pub fn parse(text: Option<&str>) -> Checkpoint {
        let text = text.unwrap_or_default();
        let hex = |h: &str| u64::from_str_radix(h, 16).ok();
        if let Some(rest) = text.strip_prefix("walk:")
            && let Some((fingerprint, after)) = rest.split_once(':')
            && let Some(fingerprint) = hex(fingerprint)
        {
            return Checkpoint::Walking {
                fingerprint,
                after: after.to_owned(),
            };
        }
        if let Some(fingerprint) = text.strip_prefix("done:").and_then(hex) {
            return Checkpoint::Done { fingerprint };
        }
        Checkpoint::Start
    }

    /// Its text, for the host.
    pub fn text(&self) -> String {
        match self {
            Checkpoint::Start => String::new(),
            Checkpoint::Walking { fingerprint, after } => {
                format!("walk:{fingerprint:016x}:{after}")
            }
            Checkpoint::Done { fingerprint } => format!("done:{fingerprint:016x}"),
        }
    }
}

/// A fingerprint being made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(pub u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(EMPTY)
    }
}

impl Fingerprint {
    /// Adds a file listed, as `version` (what its document's version is).
    pub fn add(&mut self, found: &Found, version: &str) {
        for bytes in [found.rel.as_bytes(), b"\0", version.as_bytes(), b"\n"] {
            for byte in bytes {
                self.0 ^= u64::from(*byte);
                self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_read_back_and_garbage_starts_again() {
        for checkpoint in [
            Checkpoint::Start,
            Checkpoint::Walking {
                fingerprint: 7,
                after: "a/b: c".to_owned(),
            },
            Checkpoint::Done {
                fingerprint: u64::MAX,
            },
        ] {
            assert_eq!(Checkpoint::parse(Some(&checkpoint.text())), checkpoint);
        }
        assert_eq!(Checkpoint::parse(Some("walk:zz:a")), Checkpoint::Start);
        assert_eq!(Checkpoint::parse(None), Checkpoint::Start);
    }
}
