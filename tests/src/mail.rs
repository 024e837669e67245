//! Mail messages (RFC 5322 with MIME) built in code for the IMAP tests and benchmark: headers
//! encoded as mail clients write them (RFC 2047 words, RFC 2231 file names), bodies in several
//! charsets and transfer encodings, attachments in base64.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// A message being built.
#[derive(Debug, Clone)]
pub struct Mail {
    headers: Vec<(String, String)>,
    body: Body,
}

#[derive(Debug, Clone)]
enum Body {
    /// Content-Type, Content-Transfer-Encoding, and the encoded body.
    Single(String, String, Vec<u8>),
    /// A text part and attachments (name, MIME type, bytes).
    Mixed(Box<Body>, Vec<(String, String, Vec<u8>)>),
}

impl Mail {
    /// A plain text message in UTF-8 (quoted-printable), from `from`, with `subject` as
    /// written in the header (already encoded if it needs to be) and `message_id`.
    pub fn new(from: &str, subject: &str, message_id: &str, text: &str) -> Mail {
        Mail {
            headers: vec![
                ("From".into(), from.into()),
                ("To".into(), "Alice <alice@example.org>".into()),
                ("Subject".into(), subject.into()),
                ("Date".into(), "Mon, 02 Nov 2026 09:00:00 +0000".into()),
                ("Message-ID".into(), format!("<{message_id}>")),
                ("MIME-Version".into(), "1.0".into()),
            ],
            body: Body::Single(
                "text/plain; charset=utf-8".into(),
                "quoted-printable".into(),
                quoted_printable(text.as_bytes()),
            ),
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Mail {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The body as `bytes` in `charset`, sent as 8-bit.
    pub fn body_in(mut self, charset: &str, bytes: &[u8]) -> Mail {
        self.body = Body::Single(
            format!("text/plain; charset={charset}"),
            "8bit".into(),
            bytes.to_vec(),
        );
        self
    }

    /// The body as HTML only, in UTF-8 (base64).
    pub fn html_only(mut self, html: &str) -> Mail {
        self.body = Body::Single(
            "text/html; charset=utf-8".into(),
            "base64".into(),
            wrapped_base64(html.as_bytes()),
        );
        self
    }

    /// Adds an attachment named `name` (RFC 2231-encoded when not ASCII).
    pub fn attach(mut self, name: &str, mime: &str, bytes: &[u8]) -> Mail {
        let attachment = (name.to_owned(), mime.to_owned(), bytes.to_vec());
        self.body = match self.body {
            Body::Mixed(text, mut attachments) => {
                attachments.push(attachment);
                Body::Mixed(text, attachments)
            }
            single => Body::Mixed(Box::new(single), vec![attachment]),
        };
        self
    }

    /// The message's bytes, lines ending in CRLF.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, value) in &self.headers {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        match &self.body {
            Body::Single(kind, encoding, body) => {
                out.extend_from_slice(
                    format!(
                        "Content-Type: {kind}\r\nContent-Transfer-Encoding: {encoding}\r\n\r\n"
                    )
                    .as_bytes(),
                );
                out.extend_from_slice(body);
            }
            Body::Mixed(text, attachments) => {
                let boundary = "quarry-test-boundary-7f3a";
                out.extend_from_slice(
                    format!("Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n")
                        .as_bytes(),
                );
                if let Body::Single(kind, encoding, body) = text.as_ref() {
                    out.extend_from_slice(
                        format!("--{boundary}\r\nContent-Type: {kind}\r\nContent-Transfer-Encoding: {encoding}\r\n\r\n")
                            .as_bytes(),
                    );
                    out.extend_from_slice(body);
                    out.extend_from_slice(b"\r\n");
                }
                for (name, mime, bytes) in attachments {
                    out.extend_from_slice(
                        format!(
                            "--{boundary}\r\nContent-Type: {mime}\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; {}\r\n\r\n",
                            file_name(name)
                        )
                        .as_bytes(),
                    );
                    out.extend_from_slice(&wrapped_base64(bytes));
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
            }
        }
        out
    }
}

/// `text` as an RFC 2047 encoded word (UTF-8, base64).
pub fn encoded_word(text: &str) -> String {
    format!("=?UTF-8?B?{}?=", STANDARD.encode(text.as_bytes()))
}

/// A Content-Disposition file name: quoted when ASCII, RFC 2231 (`filename*=UTF-8''...`)
/// otherwise.
fn file_name(name: &str) -> String {
    if name.is_ascii() {
        return format!("filename=\"{name}\"");
    }
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("filename*=UTF-8''{encoded}")
}

fn wrapped_base64(bytes: &[u8]) -> Vec<u8> {
    let encoded = STANDARD.encode(bytes);
    let mut out = Vec::new();
    for line in encoded.as_bytes().chunks(76) {
        out.extend_from_slice(line);
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn quoted_printable(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut column = 0;
    for &b in bytes {
        let piece = if b == b'\n' {
            column = 0;
            out.extend_from_slice(b"\r\n");
            continue;
        } else if (b.is_ascii_graphic() && b != b'=') || b == b' ' {
            vec![b]
        } else {
            format!("={b:02X}").into_bytes()
        };
        if column + piece.len() > 75 {
            out.extend_from_slice(b"=\r\n");
            column = 0;
        }
        column += piece.len();
        out.extend_from_slice(&piece);
    }
    out.extend_from_slice(b"\r\n");
    out
}
