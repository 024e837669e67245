//! Fetching messages' texts: where their locators say, a folder's worth in one FETCH when the
//! host asks for several; a message that moved is found again by its Message-ID.

use std::collections::BTreeMap;

use quarry_sdk::{Content, DocRef, Error};

use crate::client::Imap;
use crate::message::{self, Address};
use crate::protocol::Item;
use crate::recent::Recent;
use crate::utf7;

/// Messages asked for (their position among the documents, and their UID), by folder and
/// UIDVALIDITY.
type ByFolder = BTreeMap<(Vec<u8>, u32), Vec<(usize, u32)>>;

/// Texts found, by their position among the documents asked for, with the raw messages.
type Found = Vec<(usize, Result<Content, Error>, Vec<u8>)>;

/// The texts of `docs`, in order: the messages of one folder in one FETCH, and any that is
/// not where its locator says (moved, or its folder renumbered) on its own.
pub fn contents(
    imap: &mut Imap,
    named: &[String],
    docs: &[DocRef],
    recent: &mut Recent,
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
        if let Ok(found) = fetch_together(imap, &folder, validity, &wanted) {
            for (at, content, bytes) in found {
                recent.keep(&docs[at].locator, &bytes);
                answers[at] = Some(content);
            }
        }
    }
    answers
        .into_iter()
        .zip(docs)
        .map(|(answer, doc)| answer.unwrap_or_else(|| content(imap, named, doc, recent)))
        .collect()
}

/// The messages `wanted` (position, UID) of `folder`, if it still has UIDVALIDITY `validity`:
/// each one found, with its text.
fn fetch_together(
    imap: &mut Imap,
    folder: &[u8],
    validity: u32,
    wanted: &[(usize, u32)],
) -> Result<Found, Error> {
    if imap.open(folder)?.uid_validity != validity {
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
    let display = utf7::decode(folder);
    Ok(wanted
        .iter()
        .filter_map(|(at, uid)| {
            let attributes = by_uid.get(&u64::from(*uid))?;
            let bytes = raw(attributes).to_vec();
            Some((*at, text_of(attributes, &display), bytes))
        })
        .collect())
}

/// The text of `doc`, fetched where its locator says or, if it moved, where its Message-ID is.
pub fn content(
    imap: &mut Imap,
    named: &[String],
    doc: &DocRef,
    recent: &mut Recent,
) -> Result<Content, Error> {
    let address = Address::parse(&doc.locator)?;
    let items = body_items(imap);
    let (found, attributes) = fetch_one(imap, named, &address, &items)?;
    recent.keep(&doc.locator, raw(&attributes));
    text_of(&attributes, &utf7::decode(&found.folder))
}

/// `items` of the message at `address` (a FETCH of its UID), or, if it is no longer there,
/// of the message with its Message-ID in the connector's folders (`named`, or the default
/// ones); with where it was found.
pub fn fetch_one(
    imap: &mut Imap,
    named: &[String],
    address: &Address,
    items: &str,
) -> Result<(Address, Vec<Item>), Error> {
    if let Ok(state) = imap.open(&address.folder)
        && state.uid_validity == address.uid_validity
        && let Some(attributes) = fetch_uid(imap, address.uid, items)?
    {
        return Ok((address.clone(), attributes));
    }
    let moved = moved(imap, named, address)?;
    let attributes = fetch_uid(imap, moved.uid, items)?.ok_or_else(|| {
        Error::NotFound(format!(
            "the message is no longer in {}",
            utf7::decode(&moved.folder)
        ))
    })?;
    Ok((moved, attributes))
}

/// The FETCH attributes of message `uid` of the open folder, if it has it.
fn fetch_uid(imap: &mut Imap, uid: u32, items: &str) -> Result<Option<Vec<Item>>, Error> {
    Ok(imap.fetch(&[uid], items)?.into_iter().find(|attributes| {
        message::attribute(attributes, "UID").and_then(Item::number) == Some(u64::from(uid))
    }))
}

/// Where the message of `address`, gone from its place, is now: the first of the connector's
/// folders holding its Message-ID.
fn moved(imap: &mut Imap, named: &[String], address: &Address) -> Result<Address, Error> {
    if !address.message_id.is_empty() {
        for folder in crate::folders::choose(imap, named)? {
            let state = imap.examine(&folder.name)?;
            if let Some(&uid) = imap.search_message_id(&address.message_id)?.first() {
                return Ok(Address {
                    uid_validity: state.uid_validity,
                    uid,
                    message_id: address.message_id.clone(),
                    folder: folder.name,
                });
            }
        }
    }
    Err(Error::NotFound(format!(
        "the message is no longer in {}",
        utf7::decode(&address.folder)
    )))
}

/// What to fetch of a message for its text: its UID, its bytes, and Gmail's labels.
fn body_items(imap: &Imap) -> String {
    if imap.has("X-GM-EXT-1") {
        "UID BODY.PEEK[] X-GM-LABELS".to_owned()
    } else {
        "UID BODY.PEEK[]".to_owned()
    }
}

/// The raw message of a FETCH's attributes (empty when the server left it out).
fn raw(attributes: &[Item]) -> &[u8] {
    message::section(attributes, "BODY[")
        .and_then(Item::bytes)
        .unwrap_or_default()
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
                // System labels (`\Inbox`, `\Sent`) by their names.
                .map(|l| utf7::decode(l.trim_start_matches('\\').as_bytes()))
                .collect::<Vec<_>>()
                .join(", ")
        });
    message::content(bytes, folder, labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gmail_labels_are_metadata_in_words() {
        let message = b"From: Ann <ann@example.org>\r\nSubject: Rota\r\nMessage-ID: <g@x>\r\n\r\nThe rota is up.\r\n".to_vec();
        // Gmail's form: system labels as atoms, others as (modified UTF-7) strings.
        let line = format!(
            r#"* 3 FETCH (UID 9 X-GM-LABELS (\Inbox "Caf&AOk-" Important) BODY[] {{{}}})"#,
            message.len()
        );
        let mut literals = vec![message].into_iter();
        let items = crate::protocol::parse(line.as_bytes(), &mut literals).expect("parses");
        let attributes = items[3].list().expect("the attributes");
        let content = text_of(attributes, "[Gmail]/All Mail").expect("its text");
        let meta = |key: &str| {
            content
                .metadata
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(meta("labels"), Some("Inbox, Café, Important"));
        assert_eq!(meta("folder"), Some("[Gmail]/All Mail"));
        assert!(content.text.contains("The rota is up."), "{}", content.text);
    }
}
