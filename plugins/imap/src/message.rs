//! One message as a document: what a listing tells of it (its headers' Message-ID, Subject and
//! Date, its size and arrival), its address in the mailbox (the locator), its link (an
//! `imap://` URL, RFC 5092) and its text (the shared mail extractor, with the folder and
//! Gmail's labels).

use mail_parser::MessageParser;
use quarry_sdk::{Content, DocMeta, Error, stable_id};

use crate::folders::Chosen;
use crate::protocol::Item;
use crate::server::Server;

/// What a listing fetches of each message.
pub const LISTED: &str =
    "UID RFC822.SIZE INTERNALDATE BODY.PEEK[HEADER.FIELDS (MESSAGE-ID SUBJECT DATE)]";

/// Where a message is: its folder, the folder's UIDVALIDITY, its UID, and its Message-ID (to
/// find it again should it have moved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// UIDVALIDITY of the folder when the message was listed.
    pub uid_validity: u32,
    /// Its UID there.
    pub uid: u32,
    /// Its Message-ID (without angle brackets), or empty.
    pub message_id: String,
    /// The folder's name as the server writes it.
    pub folder: Vec<u8>,
}

impl Address {
    /// The locator: the fields joined by tabs, the folder last.
    pub fn locator(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}",
            self.uid_validity,
            self.uid,
            self.message_id.replace('\t', " "),
            String::from_utf8_lossy(&self.folder)
        )
    }

    /// The address a locator holds.
    pub fn parse(locator: &str) -> Result<Address, Error> {
        let bad = || Error::NotFound(format!("not a message address: {locator:?}"));
        let mut fields = locator.splitn(4, '\t');
        let uid_validity = fields.next().and_then(|f| f.parse().ok()).ok_or_else(bad)?;
        let uid = fields.next().and_then(|f| f.parse().ok()).ok_or_else(bad)?;
        let message_id = fields.next().ok_or_else(bad)?.to_owned();
        let folder = fields.next().ok_or_else(bad)?.as_bytes().to_vec();
        Ok(Address {
            uid_validity,
            uid,
            message_id,
            folder,
        })
    }
}

/// The value of a FETCH response's attribute `name` (`UID`, `RFC822.SIZE`).
pub fn attribute<'a>(attributes: &'a [Item], name: &str) -> Option<&'a Item> {
    attributes
        .chunks(2)
        .find(|pair| {
            pair[0]
                .atom()
                .is_some_and(|key| key.eq_ignore_ascii_case(name))
        })
        .and_then(|pair| pair.get(1))
}

/// The first attribute whose name starts with `prefix` (`BODY[`).
pub fn section<'a>(attributes: &'a [Item], prefix: &str) -> Option<&'a Item> {
    attributes
        .chunks(2)
        .find(|pair| {
            pair[0]
                .atom()
                .is_some_and(|key| key.to_ascii_uppercase().starts_with(prefix))
        })
        .and_then(|pair| pair.get(1))
}

/// The listing entry of a message of `folder` (UIDVALIDITY `uid_validity`), from its FETCH
/// attributes ([`LISTED`]); `None` when the server left out its UID.
pub fn meta(
    attributes: &[Item],
    folder: &Chosen,
    uid_validity: u32,
    server: &Server,
    user: &str,
    max_text_bytes: u64,
) -> Option<DocMeta> {
    let uid = attribute(attributes, "UID")?.number()?;
    let uid = u32::try_from(uid).ok()?;
    let size = attribute(attributes, "RFC822.SIZE")
        .and_then(Item::number)
        .unwrap_or(0);
    let arrived = attribute(attributes, "INTERNALDATE")
        .and_then(Item::text)
        .and_then(|d| internal_date_ms(&d))
        .unwrap_or(0);
    let headers = section(attributes, "BODY[")
        .and_then(Item::bytes)
        .unwrap_or_default();
    let parsed = MessageParser::default().parse_headers(headers);
    let message_id = parsed
        .as_ref()
        .and_then(|m| m.message_id())
        .unwrap_or("")
        .to_owned();
    let subject = parsed
        .as_ref()
        .and_then(|m| m.subject())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or("(no subject)")
        .to_owned();
    let written = parsed
        .as_ref()
        .and_then(|m| m.date())
        .map(|d| d.to_timestamp() * 1000)
        .filter(|&ms| ms > 0);
    let address = Address {
        uid_validity,
        uid,
        message_id,
        folder: folder.name.clone(),
    };
    let id = if address.message_id.is_empty() {
        stable_id("u", &format!("{}\n{uid_validity}\n{uid}", folder.display))
    } else {
        stable_id("m", &address.message_id)
    };
    Some(DocMeta {
        id,
        locator: address.locator(),
        title: subject,
        path: Some(folder.display.clone()),
        url: Some(url(server, user, &folder.display, uid_validity, uid)),
        mime_type: "message/rfc822".to_owned(),
        size_bytes: size,
        update_time_ms: written.unwrap_or(arrived),
        // A message never changes in place: a new version is a new place (another folder or
        // UID), whose text is fetched again so that its folder is right.
        version: format!("{size}.{arrived}.{}.{uid}", folder.key),
        has_text: size <= max_text_bytes,
    })
}

/// The text of the raw message `bytes`, found in `folder`, with Gmail's `labels` if any.
pub fn content(bytes: &[u8], folder: &str, labels: Option<String>) -> Result<Content, Error> {
    let mut content = quarry_extract::mail::to_content(bytes)?;
    content = content.with_meta("folder", folder.to_owned());
    if let Some(labels) = labels.filter(|l| !l.is_empty()) {
        content = content.with_meta("labels", labels);
    }
    Ok(content)
}

/// An `imap://` URL of a message (RFC 5092): where a mail client opens it.
pub fn url(server: &Server, user: &str, folder: &str, uid_validity: u32, uid: u32) -> String {
    format!(
        "imap://{}@{}:{}/{};UIDVALIDITY={uid_validity}/;UID={uid}",
        percent(user),
        server.url_host(),
        server.port,
        percent(folder)
    )
}

/// Percent-encodes all but unreserved characters and `/` (a folder's hierarchy).
fn percent(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// INTERNALDATE (`17-Jul-1996 02:44:25 -0700`) in milliseconds since the epoch: with its
/// date's dashes as spaces it is an RFC 5322 date, which mail-parser reads.
fn internal_date_ms(text: &str) -> Option<i64> {
    let (date, time) = text.trim().split_once(' ')?;
    let header = format!("Date: {} {time}\r\n\r\n", date.replace('-', " "));
    let parsed = MessageParser::default().parse_headers(header.as_bytes())?;
    Some(parsed.date()?.to_timestamp() * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_dates_are_utc_milliseconds() {
        assert_eq!(internal_date_ms("01-Jan-1970 00:00:00 +0000"), Some(0));
        assert_eq!(
            internal_date_ms("17-Jul-1996 02:44:25 -0700"),
            Some(837_596_665_000)
        );
        assert_eq!(
            internal_date_ms(" 2-Feb-2026 10:00:00 +0100"),
            Some(1_770_022_800_000)
        );
        assert_eq!(internal_date_ms("garbage"), None);
    }

    #[test]
    fn addresses_round_trip_and_urls_follow_rfc_5092() -> Result<(), Error> {
        let address = Address {
            uid_validity: 7,
            uid: 42,
            message_id: "a@b".into(),
            folder: b"Archive/2026 \xc3\xa9t\xc3\xa9".to_vec(),
        };
        assert_eq!(Address::parse(&address.locator())?, address);
        let server = Server::parse("imaps://mail.example.com")?;
        assert_eq!(
            url(&server, "me@example.com", "Sent Items", 7, 42),
            "imap://me%40example.com@mail.example.com:993/Sent%20Items;UIDVALIDITY=7/;UID=42"
        );
        Ok(())
    }
}
