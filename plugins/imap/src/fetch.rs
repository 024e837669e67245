//! Fetching messages' texts: where their locators say, a folder's worth in one FETCH when the
//! host asks for several; a message that moved is found again by its Message-ID.

use std::collections::BTreeMap;

use quarry_sdk::{Content, DocRef, Error};

use crate::client::Imap;
use crate::folders::Chosen;
use crate::message::{self, Address};
use crate::protocol::Item;
use crate::utf7;

/// Messages asked for (their position among the documents, and their UID), by folder and
/// UIDVALIDITY.
type ByFolder = BTreeMap<(Vec<u8>, u32), Vec<(usize, u32)>>;

/// Texts found, by their position among the documents asked for.
type Found = Vec<(usize, Result<Content, Error>)>;

/// The texts of `docs`, in order: the messages of one folder in one FETCH, and any that is
/// not where its locator says (moved, or its folder renumbered) on its own.
pub fn contents(
    imap: &mut Imap,
    folders: &[Chosen],
    docs: &[DocRef],
) -> Vec<Result<Content, Error>> {
    let mut answers: Vec<Option<Result<Content, Error>>> = docs.iter().map(|_| None).collect();
    let mut by_folder = ByFolder::new();
    for (at, doc) in docs.iter().enumerate() {
        match Address::parse(&doc.locator) {
            Ok(address) => by_folder
                .entry((address.folder, address.uid_validity))
                .or_default()
                .push((at, address.uid)),
            Err(e) => answers[at] = Some(Err(e)),
        }
    }
    for ((folder, validity), wanted) in by_folder {
        if let Ok(found) = fetch_together(imap, folders, &folder, validity, &wanted) {
            for (at, content) in found {
                answers[at] = Some(content);
            }
        }
    }
    answers
        .into_iter()
        .zip(docs)
        .map(|(answer, doc)| answer.unwrap_or_else(|| content(imap, folders, doc)))
        .collect()
}

/// The messages `wanted` (position, UID) of `folder`, if it still has UIDVALIDITY `validity`:
/// each one found, with its text.
fn fetch_together(
    imap: &mut Imap,
    folders: &[Chosen],
    folder: &[u8],
    validity: u32,
    wanted: &[(usize, u32)],
) -> Result<Found, Error> {
    if imap.examine(folder)?.uid_validity != validity {
        return Ok(Vec::new());
    }
    let mut uids: Vec<u32> = wanted.iter().map(|(_, uid)| *uid).collect();
    uids.sort_unstable();
    uids.dedup();
    let fetched = imap.fetch(&uids, &body_items(imap))?;
    let mut by_uid = BTreeMap::new();
    for attributes in &fetched {
        if let Some(uid) = message::attribute(attributes, "UID").and_then(Item::number) {
            by_uid.insert(uid, attributes);
        }
    }
    let display = display_of(folders, folder);
    Ok(wanted
        .iter()
        .filter_map(|(at, uid)| {
            let attributes = by_uid.get(&u64::from(*uid))?;
            Some((*at, text_of(attributes, &display)))
        })
        .collect())
}

/// The text of `doc`, fetched where its locator says or, if it moved, where its Message-ID is.
pub fn content(imap: &mut Imap, folders: &[Chosen], doc: &DocRef) -> Result<Content, Error> {
    let address = find(imap, folders, &Address::parse(&doc.locator)?)?;
    let items = body_items(imap);
    let fetched = imap.fetch(&[address.uid], &items)?;
    let attributes = fetched.first().ok_or_else(|| gone(doc))?;
    text_of(attributes, &display_of(folders, &address.folder))
}

/// Where the message of `address` is now: there, if its folder has the same UIDVALIDITY and
/// still holds its UID; else the first folder holding its Message-ID.
pub fn find(imap: &mut Imap, folders: &[Chosen], address: &Address) -> Result<Address, Error> {
    if let Ok(state) = imap.examine(&address.folder)
        && state.uid_validity == address.uid_validity
        && imap.uids_from(address.uid)?.first() == Some(&address.uid)
    {
        return Ok(address.clone());
    }
    if !address.message_id.is_empty() {
        for folder in folders {
            let state = imap.examine(&folder.name)?;
            if let Some(&uid) = imap.search_message_id(&address.message_id)?.first() {
                return Ok(Address {
                    uid_validity: state.uid_validity,
                    uid,
                    message_id: address.message_id.clone(),
                    folder: folder.name.clone(),
                });
            }
        }
    }
    Err(Error::NotFound(format!(
        "the message is no longer in {}",
        utf7::decode(&address.folder)
    )))
}

/// A message that is no longer on the server.
pub fn gone(doc: &DocRef) -> Error {
    Error::NotFound(format!("message {} is no longer on the server", doc.id))
}

/// What to fetch of a message for its text: its UID, its bytes, and Gmail's labels.
fn body_items(imap: &Imap) -> String {
    if imap.has("X-GM-EXT-1") {
        "UID BODY.PEEK[] X-GM-LABELS".to_owned()
    } else {
        "UID BODY.PEEK[]".to_owned()
    }
}

/// The text of a fetched message of the folder people call `folder`.
fn text_of(attributes: &[Item], folder: &str) -> Result<Content, Error> {
    let bytes = message::section(attributes, "BODY[")
        .and_then(Item::bytes)
        .ok_or_else(|| Error::Other("the server sent the message without its body".into()))?;
    let labels = message::attribute(attributes, "X-GM-LABELS")
        .and_then(Item::list)
        .map(|labels| {
            labels
                .iter()
                .filter_map(Item::text)
                .map(|l| utf7::decode(l.as_bytes()))
                .collect::<Vec<_>>()
                .join(", ")
        });
    message::content(bytes, folder, labels)
}

/// The name people see of the folder the server calls `name`.
fn display_of(folders: &[Chosen], name: &[u8]) -> String {
    folders
        .iter()
        .find(|f| f.name == name)
        .map_or_else(|| utf7::decode(name), |f| f.display.clone())
}
