//! PDF to text, page by page.

use lopdf::{Document, Object, decode_text_string};
use pdf_extract::{PlainTextOutput, output_doc_page};
use quarry_sdk::{Content, Error};

/// The text of every page, with page boundaries, plus the title and author when the document
/// states them. A page that cannot be read gives empty text; a document with no readable page is
/// an error. Pages without a word are counted (`pages_without_text`); when no page has one, the
/// document is marked `no_text_layer`, which `connector status` shows.
pub fn to_content(bytes: &[u8]) -> Result<Content, Error> {
    let mut doc =
        Document::load_mem(bytes).map_err(|e| Error::Other(format!("not a readable PDF: {e}")))?;
    if doc.is_encrypted() {
        // Many PDFs are "encrypted" with an empty user password; others need a password we lack.
        doc.decrypt("")
            .map_err(|e| Error::Other(format!("PDF is password-protected: {e}")))?;
    }
    without_images(&mut doc);
    super::pdf_fonts::made_safe(&mut doc);
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    let mut pages = Vec::with_capacity(numbers.len());
    let mut failed = 0;
    let mut first_error = None;
    for number in &numbers {
        let mut text = String::new();
        let result = output_doc_page(&doc, &mut PlainTextOutput::new(&mut text), *number);
        if let Err(e) = result {
            failed += 1;
            first_error.get_or_insert_with(|| e.to_string());
            text.clear();
        }
        pages.push(quarry_sdk::text::tidy(&text));
    }
    if !numbers.is_empty() && failed == numbers.len() {
        return Err(Error::Other(format!(
            "no page of this PDF could be read: {}",
            first_error.unwrap_or_default()
        )));
    }
    let mut content = Content::pages(&pages).with_meta("page_count", numbers.len().to_string());
    if failed > 0 {
        content = content.with_meta("unreadable_pages", failed.to_string());
    }
    // Pages read without a word: scanned pages (images of text), which no OCR reads here yet.
    let blank = pages
        .iter()
        .filter(|p| p.trim().is_empty())
        .count()
        .saturating_sub(failed);
    if blank > 0 && blank + failed == numbers.len() {
        content = content.with_meta(
            "no_text_layer",
            "no page has a text layer (scanned pages?): found by name only",
        );
    } else if blank > 0 {
        content = content.with_meta("pages_without_text", blank.to_string());
    }
    for (key, name) in [(b"Title".as_slice(), "title"), (b"Author", "author")] {
        if let Some(value) = info_string(&doc, key) {
            content = content.with_meta(name, value);
        }
    }
    Ok(content)
}

/// Empties the document's images, which hold no text. pdf-extract runs every XObject a page
/// draws as a content stream: an image's samples would be inflated whole, with no bound, and
/// parsed as drawing operators, which is slow on a scanned page and panics (ending the call)
/// on samples that happen to parse, such as hex digits. OCR reads the images from the file.
fn without_images(doc: &mut Document) {
    for object in doc.objects.values_mut() {
        if let Object::Stream(stream) = object
            && stream
                .dict
                .get(b"Subtype")
                .and_then(Object::as_name)
                .is_ok_and(|subtype| subtype == b"Image")
        {
            stream.set_plain_content(Vec::new());
        }
    }
}

/// A text entry of the document information dictionary.
fn info_string(doc: &Document, key: &[u8]) -> Option<String> {
    let info = doc.trailer.get_deref(b"Info", doc).ok()?.as_dict().ok()?;
    let value: &Object = info.get_deref(key, doc).ok()?;
    let text = decode_text_string(value).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// `doc` with one page drawn by `ops` with `resources`, written out.
#[cfg(test)]
pub(super) fn one_page(mut doc: Document, ops: &str, resources: lopdf::Dictionary) -> Vec<u8> {
    use lopdf::{Stream, dictionary};
    let pages_id = doc.new_object_id();
    let contents = doc.add_object(Stream::new(
        lopdf::Dictionary::new(),
        ops.as_bytes().to_vec(),
    ));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => contents,
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        "Resources" => resources,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("write the PDF");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{Stream, dictionary};

    /// A PDF of one page that writes `word` and draws an image whose (unfiltered) samples read
    /// as a drawing operator short of its operands.
    fn page_with_word_and_image(word: &str) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        });
        let image = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => 6, "Height" => 2,
                "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
            },
            b"0 0 0 0 0 c\n".to_vec(),
        ));
        let ops = format!("BT /F1 12 Tf 72 720 Td ({word}) Tj ET q 6 0 0 2 72 600 cm /Im1 Do Q");
        let resources = dictionary! {
            "Font" => dictionary! { "F1" => font },
            "XObject" => dictionary! { "Im1" => image },
        };
        one_page(doc, &ops, resources)
    }

    #[test]
    fn an_image_whose_samples_parse_as_operators_does_not_stop_the_text() {
        let content = to_content(&page_with_word_and_image("Harbourmaster")).expect("read");
        assert!(content.text.contains("Harbourmaster"), "{}", content.text);
    }
}
