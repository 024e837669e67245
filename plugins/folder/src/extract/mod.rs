//! Text extraction, by kind of file. Runs inside the sandbox: parsers of untrusted files are
//! exactly what a sandbox is for.

mod delimited;
mod docx;
mod html;
mod json;
mod pdf;
pub mod text;

use std::fs::File;
use std::io::Read;

use quarry_sdk::{Content, Error};

use crate::kinds::Kind;

/// Extracts the text of `file` (at most `max_bytes` long, checked by the caller) as `kind`.
pub fn extract(kind: Kind, mut file: File, size: u64) -> Result<Content, Error> {
    if kind == Kind::Docx {
        return docx::to_content(file);
    }
    if kind == Kind::Binary {
        return Ok(Content::text(String::new()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::Other(format!("read failed: {e}")))?;
    Ok(match kind {
        Kind::Pdf => return pdf::to_content(&bytes),
        Kind::Html => {
            let (text, title) = html::to_text(&text::decode(&bytes));
            let content = Content::text(text);
            match title {
                Some(title) => content.with_meta("title", title),
                None => content,
            }
        }
        Kind::Json => {
            let source = text::decode(&bytes);
            Content::text(json::to_text(&source).unwrap_or(source))
        }
        Kind::Delimited(delimiter) => {
            Content::text(delimited::to_text(&text::decode(&bytes), delimiter))
        }
        Kind::Text | Kind::Docx | Kind::Binary => Content::text(text::decode(&bytes)),
    })
}
