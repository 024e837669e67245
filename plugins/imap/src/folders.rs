//! Which folders a connector reads: the ones its `folders` setting names, or else every
//! subscribed folder but the trash and junk (every folder, when none is subscribed). On Gmail,
//! whose labels are folders holding the same messages, only `[Gmail]/All Mail` (the folder
//! flagged `\All`), each message once, its labels read from `X-GM-LABELS`.

use sha2::{Digest, Sha256};

use quarry_sdk::Error;

use crate::client::{Folder, Imap};

/// A folder the connector reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The name as the server writes it.
    pub name: Vec<u8>,
    /// The name for people.
    pub display: String,
    /// A short stable key of the name, for checkpoints and versions.
    pub key: String,
}

impl Chosen {
    fn of(folder: &Folder) -> Chosen {
        let digest = Sha256::digest(&folder.name);
        Chosen {
            name: folder.name.clone(),
            display: folder.display.clone(),
            key: digest[..4].iter().map(|b| format!("{b:02x}")).collect(),
        }
    }
}

/// Names of folders left out by default (the last part of the name, without regard to case).
const LEFT_OUT: [&str; 6] = [
    "trash",
    "junk",
    "spam",
    "deleted items",
    "deleted messages",
    "bulk mail",
];

/// The folders to read, INBOX first and the rest by name. `named` is the `folders` setting
/// (comma-separated names as people see them), empty for the default.
pub fn choose(imap: &mut Imap, named: &[String]) -> Result<Vec<Chosen>, Error> {
    let all: Vec<Folder> = imap
        .list()?
        .into_iter()
        .filter(|f| {
            !f.flags
                .iter()
                .any(|flag| flag == "\\noselect" || flag == "\\nonexistent")
        })
        .collect();
    let mut chosen: Vec<&Folder> = if !named.is_empty() {
        let mut picked = Vec::new();
        for name in named {
            let folder = all
                .iter()
                .find(|f| {
                    f.display == *name
                        || f.display.eq_ignore_ascii_case(name)
                            && f.display.eq_ignore_ascii_case("INBOX")
                })
                .ok_or_else(|| {
                    Error::InvalidConfig(format!(
                        "`folders` names {name:?}, which the server does not have (it has: {})",
                        all.iter()
                            .map(|f| f.display.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?;
            picked.push(folder);
        }
        picked
    } else if imap.has("X-GM-EXT-1")
        && let Some(everything) = all
            .iter()
            .find(|f| f.flags.iter().any(|flag| flag == "\\all"))
    {
        vec![everything]
    } else {
        let subscribed = imap.subscribed()?;
        let default = |f: &&Folder| !left_out(f);
        let mut picked: Vec<&Folder> = all
            .iter()
            .filter(|f| subscribed.contains(&f.name))
            .filter(default)
            .collect();
        if picked.is_empty() {
            picked = all.iter().filter(default).collect();
        }
        picked
    };
    chosen.sort_by(|a, b| {
        let inbox = |f: &Folder| !f.display.eq_ignore_ascii_case("INBOX");
        (inbox(a), &a.display).cmp(&(inbox(b), &b.display))
    });
    chosen.dedup_by(|a, b| a.name == b.name);
    Ok(chosen.into_iter().map(Chosen::of).collect())
}

/// Whether a folder is trash or junk, by its special-use flag or its name.
fn left_out(folder: &Folder) -> bool {
    folder.flags.iter().any(|f| f == "\\trash" || f == "\\junk")
        || folder
            .display
            .rsplit(['/', '.'])
            .next()
            .is_some_and(|last| LEFT_OUT.iter().any(|name| last.eq_ignore_ascii_case(name)))
}
