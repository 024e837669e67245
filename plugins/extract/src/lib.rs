//! Text extraction, by kind of file, shared by Quarry's connectors (the folder connector's
//! files, the IMAP connector's messages and their attachments). Runs inside the sandbox:
//! parsers of untrusted files are exactly what a sandbox is for.

mod delimited;
mod docx;
mod epub;
mod json;
pub mod kinds;
pub mod mail;
mod ooxml;
mod opendocument;
mod package;
mod pdf;
mod pdf_fonts;
mod pptx;
mod rtf;
#[cfg(feature = "scans")]
pub mod scan;
mod spreadsheet;
pub mod text;

use std::io;

use quarry_sdk::fs::File;
use quarry_sdk::{Content, Error};

pub use crate::kinds::Kind;
use opendocument::Flavour;
use spreadsheet::Book;

/// Why extraction failed: the file could not be read, or its content is not what its kind says.
pub enum Failure {
    /// Reading failed.
    Io(io::Error),
    /// The content is malformed (a corrupt PDF, a ZIP that is not a Word document).
    Format(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Format(e)
    }
}

/// What the first read of a file asks for: a file of up to this size is read whole by it.
pub const HEAD_BYTES: u32 = 64 << 10;

/// Extracts the text of a file of `size` bytes (checked against the limit by the caller) as
/// `kind`; `head` is what the caller read of its start (all of it when its length is `size`,
/// possibly nothing), and `open` opens the file for the rest, when there is more to read.
pub fn extract(
    kind: Kind,
    open: &dyn Fn() -> io::Result<File>,
    size: u64,
    head: Vec<u8>,
) -> Result<Content, Failure> {
    // Packages (ZIP files) are read part by part through the file, never whole.
    if kind.is_package() {
        let file = open().map(io::BufReader::new).map_err(Failure::Io)?;
        return Ok(package(kind, file)?);
    }
    if kind == Kind::Binary {
        return Ok(Content::text(String::new()));
    }
    // The file to the size it had when checked against the limit: a file that grows meanwhile
    // is read to that size, and its new version is picked up by the next sync.
    let mut bytes = head;
    let have = bytes.len() as u64;
    if have < size {
        let file = open().map_err(Failure::Io)?;
        bytes.extend(file.read_at(have, size - have).map_err(Failure::Io)?);
    }
    bytes.truncate(usize::try_from(size).unwrap_or(usize::MAX));
    Ok(from_bytes(kind, bytes)?)
}

/// The text of a package (a ZIP file) of `kind`, read from `file`.
fn package<R: io::Read + io::Seek>(kind: Kind, file: R) -> Result<Content, Error> {
    match kind {
        Kind::Docx => docx::to_content(file),
        Kind::Pptx => pptx::to_content(file),
        Kind::Odt => opendocument::to_content(file, Flavour::Text),
        Kind::Odp => opendocument::to_content(file, Flavour::Presentation),
        Kind::Xlsx => spreadsheet::to_content(file, Book::Xlsx),
        Kind::Ods => spreadsheet::to_content(file, Book::Ods),
        Kind::Epub => epub::to_content(file),
        _ => Ok(Content::text(String::new())),
    }
}

/// The text of `bytes` as `kind`: a whole file, or an attachment of a mail.
pub fn from_bytes(kind: Kind, bytes: Vec<u8>) -> Result<Content, Error> {
    Ok(match kind {
        _ if kind.is_package() => return package(kind, io::Cursor::new(bytes)),
        Kind::Pdf => return pdf::to_content(&bytes),
        Kind::Eml => return mail::to_content(&bytes),
        Kind::Rtf => return rtf::to_content(&bytes),
        Kind::Html => {
            let (text, title) = quarry_sdk::html::to_text(&text::decode(bytes));
            let content = Content::text(text);
            match title {
                Some(title) => content.with_meta("title", title),
                None => content,
            }
        }
        Kind::Json => {
            let source = text::decode(bytes);
            Content::text(json::to_text(&source).unwrap_or(source))
        }
        Kind::Delimited(delimiter) => {
            Content::text(delimited::to_text(&text::decode(bytes), delimiter))
        }
        Kind::Binary => Content::text(String::new()),
        _ => Content::text(text::decode(bytes)),
    })
}

/// Pseudo-random bytes (xorshift) for the tests that feed decoders garbage.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) fn garbage(state: &mut u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *state ^= *state << 13;
                *state ^= *state >> 7;
                *state ^= *state << 17;
                *state as u8
            })
            .collect()
    }
}
