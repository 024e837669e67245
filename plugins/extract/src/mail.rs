//! Mail messages (`.eml`, RFC 5322 with MIME) to text with mail-parser: page 1 is the headers a
//! reader sees (From, To, Cc, Date, Subject) and the text body (or the HTML body as text); each
//! attachment whose format the folder connector reads is a page of its own, under its name. The
//! subject is the title; sender, recipients, date and message id are metadata.

use mail_parser::{Address, HeaderValue, MessageParser, MimeHeaders};
use quarry_sdk::{Content, Error};

use crate::kinds::{self, Kind};

/// Attachments whose text is read, at most; the others are listed by name.
const MAX_ATTACHMENTS: usize = 32;
/// The largest attachment (decoded) whose text is read: a larger one is listed by name, as a
/// file over its connector's limit is, so that a message of tens of MB costs its plugin no
/// more memory than a file does.
const MAX_ATTACHMENT_BYTES: usize = 16 << 20;
/// Decoded attachment bytes read per message, at most; the attachments after are listed by
/// name.
const MAX_ATTACHMENTS_BYTES: usize = 32 << 20;

/// Extracts the text of a mail message.
pub fn to_content(bytes: &[u8]) -> Result<Content, Error> {
    let message = MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| Error::Other("not a mail message: no headers".into()))?;
    let mut metadata: Vec<(&str, String)> = Vec::new();
    let mut head = String::new();
    let mut header = |label: &str, key: &'static str, value: Option<String>| {
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            head.push_str(&format!("{label}: {value}\n"));
            metadata.push((key, value));
        }
    };
    header("From", "from", message.from().map(addresses));
    header("To", "to", message.to().map(addresses));
    header("Cc", "cc", message.cc().map(addresses));
    header("Date", "date", message.date().map(|d| d.to_rfc3339()));
    header("Subject", "title", message.subject().map(str::to_owned));
    let body = match message.body_text(0) {
        Some(text) => text.into_owned(),
        None => message
            .body_html(0)
            .map(|html| quarry_sdk::html::to_text(&html).0)
            .unwrap_or_default(),
    };
    let mut pages = vec![quarry_sdk::text::tidy(&format!("{head}\n{body}"))];
    let mut unread = Vec::new();
    let mut read_bytes = 0;
    for (n, part) in message.attachments().enumerate() {
        let name = part.attachment_name().unwrap_or("attachment").to_owned();
        let kind = kinds::by_name(&name).map(|(kind, _)| kind);
        let size = part.contents().len();
        let within = n < MAX_ATTACHMENTS
            && size <= MAX_ATTACHMENT_BYTES
            && read_bytes + size <= MAX_ATTACHMENTS_BYTES;
        let text = match kind {
            // One level of mail: a message attached to this one is not opened in turn.
            Some(kind) if within && kind != Kind::Binary && kind != Kind::Eml => {
                read_bytes += size;
                super::from_bytes(kind, part.contents().to_vec())
                    .map(|content| content.text)
                    .unwrap_or_default()
            }
            _ => String::new(),
        };
        if text.trim().is_empty() {
            unread.push(name);
        } else {
            pages.push(format!("{name}\n\n{}", quarry_sdk::text::tidy(&text)));
        }
    }
    let mut content = Content::pages(&pages);
    for (key, value) in metadata {
        content = content.with_meta(key, value);
    }
    if let Some(id) = message.message_id() {
        content = content.with_meta("message_id", id);
    }
    if let Some(thread) = thread_of(&message) {
        content = content.with_meta("thread", thread);
    }
    if !unread.is_empty() {
        content = content.with_meta("attachments_by_name_only", unread.join(", "));
    }
    Ok(content)
}

/// The thread a message belongs to: the Message-ID of its first ancestor (the first of its
/// References, else its In-Reply-To), or its own for a message that starts one. Every message
/// of a thread names the same one, whichever of them a reply quotes.
fn thread_of(message: &mail_parser::Message<'_>) -> Option<String> {
    let first = |value: &HeaderValue<'_>| match value {
        HeaderValue::Text(id) => Some(id.to_string()),
        HeaderValue::TextList(ids) => ids.first().map(ToString::to_string),
        _ => None,
    };
    first(message.references())
        .or_else(|| first(message.in_reply_to()))
        .or_else(|| message.message_id().map(str::to_owned))
}

/// Addresses as a reader sees them: `Name <address>`, comma-separated.
fn addresses(address: &Address<'_>) -> String {
    address
        .iter()
        .map(|a| match (a.name(), a.address()) {
            (Some(name), Some(address)) => format!("{name} <{address}>"),
            (Some(name), None) => name.to_owned(),
            (None, Some(address)) => address.to_owned(),
            (None, None) => String::new(),
        })
        .filter(|a| !a.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail_with_attachments(n: usize) -> String {
        let mut mail = String::from(
            "From: a@example.org\r\nSubject: many\r\nMIME-Version: 1.0\r\n\
             Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
             --b\r\nContent-Type: text/plain\r\n\r\nbody words\r\n",
        );
        for i in 0..n {
            mail.push_str(&format!(
                "--b\r\nContent-Type: text/plain\r\n\
                 Content-Disposition: attachment; filename=\"note{i}.txt\"\r\n\r\nword{i}\r\n"
            ));
        }
        mail.push_str("--b--\r\n");
        mail
    }

    #[test]
    fn attachments_past_the_bound_are_listed_by_name_only() -> Result<(), Error> {
        let content = to_content(mail_with_attachments(MAX_ATTACHMENTS + 8).as_bytes())?;
        assert_eq!(content.page_starts.len(), 1 + MAX_ATTACHMENTS);
        assert!(content.text.contains("word31") && !content.text.contains("word32"));
        let by_name = content
            .metadata
            .iter()
            .find(|(k, _)| k == "attachments_by_name_only")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        assert!(
            by_name.starts_with("note32.txt, ") && by_name.ends_with("note39.txt"),
            "{by_name}"
        );
        Ok(())
    }

    #[test]
    fn an_attachment_larger_than_a_file_may_be_is_listed_by_name_only() -> Result<(), Error> {
        let big = "tungsten,1\r\n".repeat(MAX_ATTACHMENT_BYTES / 12 + 1);
        let mail = format!(
            "From: a@example.org\r\nSubject: export\r\nMIME-Version: 1.0\r\n\
             Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
             --b\r\nContent-Type: text/plain\r\n\r\nThe export is attached.\r\n\
             --b\r\nContent-Type: text/csv\r\n\
             Content-Disposition: attachment; filename=\"export.csv\"\r\n\r\n{big}\r\n\
             --b\r\nContent-Type: text/plain\r\n\
             Content-Disposition: attachment; filename=\"small.txt\"\r\n\r\nsmall words\r\n--b--\r\n"
        );
        let content = to_content(mail.as_bytes())?;
        assert!(content.text.contains("The export is attached."));
        assert!(content.text.contains("small words"));
        assert!(!content.text.contains("tungsten"));
        assert!(
            content
                .metadata
                .iter()
                .any(|(k, v)| k == "attachments_by_name_only" && v == "export.csv")
        );
        Ok(())
    }

    #[test]
    fn replies_name_the_thread_they_belong_to() -> Result<(), Error> {
        let thread = |mail: &str| -> Result<Option<String>, Error> {
            Ok(to_content(mail.as_bytes())?
                .metadata
                .into_iter()
                .find(|(k, _)| k == "thread")
                .map(|(_, v)| v))
        };
        let start = "Message-ID: <root@x>\r\nSubject: plan\r\n\r\nbody\r\n";
        let reply =
            "Message-ID: <r1@x>\r\nIn-Reply-To: <root@x>\r\nSubject: Re: plan\r\n\r\nok\r\n";
        let deeper = "Message-ID: <r2@x>\r\nReferences: <root@x> <r1@x>\r\nIn-Reply-To: <r1@x>\r\nSubject: Re: plan\r\n\r\nyes\r\n";
        for mail in [start, reply, deeper] {
            assert_eq!(thread(mail)?.as_deref(), Some("root@x"), "{mail}");
        }
        Ok(())
    }

    #[test]
    fn deep_nesting_and_ten_thousand_parts_are_read_within_bounds() -> Result<(), Error> {
        // A message bomb: multiparts nested 2,000 deep, then 10,000 parts of text.
        let mut mail =
            String::from("From: a@example.org\r\nSubject: bomb\r\nMIME-Version: 1.0\r\n");
        for depth in 0..2_000 {
            mail.push_str(&format!(
                "Content-Type: multipart/mixed; boundary=\"b{depth}\"\r\n\r\n--b{depth}\r\n"
            ));
        }
        mail.push_str("Content-Type: multipart/mixed; boundary=\"p\"\r\n\r\n");
        for part in 0..10_000 {
            mail.push_str(&format!(
                "--p\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=\"p{part}.txt\"\r\n\r\nword{part}\r\n"
            ));
        }
        mail.push_str("--p--\r\n");
        let started = std::time::Instant::now();
        let content = to_content(mail.as_bytes())?;
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert!(
            content.page_starts.len() <= 1 + MAX_ATTACHMENTS,
            "{}",
            content.page_starts.len()
        );
        assert!(content.text.len() < 1 << 20, "{}", content.text.len());
        Ok(())
    }

    #[test]
    fn text_without_headers_is_not_a_mail() {
        assert!(to_content(b"").is_err());
    }
}
