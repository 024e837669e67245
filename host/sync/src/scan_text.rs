//! Where OCR's text goes in a document: which pages a sync asks OCR to read, and the text read
//! put on those pages, with metadata saying where the text came from.

use quarry_core::ocr::ScannedPage;
use quarry_core::{ExtractedText, SourceDoc, split_pages};

/// Pages of one document read by OCR at most: a PDF of more image pages has its first ones
/// read.
pub(crate) const MAX_OCR_PAGES: usize = 1000;

/// The metadata keys OCR sets.
const TEXT_SOURCE: &str = "text_source";
const CONFIDENCE: &str = "ocr_confidence";
const PAGES_READ: &str = "ocr_pages";
/// What the connector said of a document with no text, which OCR's text makes untrue.
const NO_TEXT_KEYS: [&str; 2] = ["no_text_layer", "pages_without_text"];

/// The pages of `doc` OCR should read, from 1: an image's only page when it has no text, or a
/// document's pages with no text (at most [`MAX_OCR_PAGES`]). Empty when none.
pub(crate) fn pages_to_read(doc: &SourceDoc, content: &ExtractedText) -> Vec<u32> {
    let mime = &doc.meta.mime_type;
    if mime.starts_with("image/") && !mime.starts_with("image/svg") {
        return if content.text.trim().is_empty() {
            vec![1]
        } else {
            Vec::new()
        };
    }
    if content.page_starts.is_empty() {
        return Vec::new();
    }
    split_pages(&content.text, &content.page_starts)
        .iter()
        .enumerate()
        .filter(|(_, page)| page.trim().is_empty())
        .filter_map(|(i, _)| u32::try_from(i + 1).ok())
        .collect()
}

/// `content` with the pages `read` put in place (an image's text as its whole text), and
/// metadata saying the text came from OCR (`text_source`: `ocr`, or `text and ocr` when some
/// pages had a text layer), with the mean confidence and the pages OCR found text on.
pub(crate) fn merge(content: &mut ExtractedText, read: &[ScannedPage]) {
    let found: Vec<&ScannedPage> = read.iter().filter(|p| !p.text.trim().is_empty()).collect();
    if content.page_starts.is_empty() {
        content.text = read
            .iter()
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
    } else {
        let mut pages: Vec<String> = split_pages(&content.text, &content.page_starts)
            .into_iter()
            .map(str::to_owned)
            .collect();
        for page in read {
            if let Some(slot) = (page.page as usize)
                .checked_sub(1)
                .and_then(|i| pages.get_mut(i))
            {
                *slot = format!("{}\n\n", page.text.trim_end());
            }
        }
        content.page_starts.clear();
        let mut text = String::new();
        for page in &pages {
            content
                .page_starts
                .push(u32::try_from(text.len()).unwrap_or(u32::MAX));
            text.push_str(page);
        }
        content.text = text;
    }
    if found.is_empty() {
        return;
    }
    let all_pages = content.page_starts.len().max(1);
    let (sum, chars) = found.iter().fold((0.0f64, 0usize), |(sum, chars), p| {
        let n = p.text.chars().filter(|c| !c.is_whitespace()).count();
        (sum + f64::from(p.confidence) * n as f64, chars + n)
    });
    content
        .metadata
        .retain(|(k, _)| !NO_TEXT_KEYS.contains(&k.as_str()));
    let source = if read.len() >= all_pages {
        "ocr"
    } else {
        "text and ocr"
    };
    content.metadata.push((TEXT_SOURCE.into(), source.into()));
    content.metadata.push((
        CONFIDENCE.into(),
        format!("{:.3}", sum / chars.max(1) as f64),
    ));
    content
        .metadata
        .push((PAGES_READ.into(), found.len().to_string()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_core::{DocId, DocMeta};

    fn doc(mime: &str) -> SourceDoc {
        SourceDoc {
            id: DocId::parse("d").expect("id"),
            locator: "d".into(),
            meta: DocMeta {
                title: "d".into(),
                path: None,
                url: None,
                mime_type: mime.into(),
                size_bytes: 1,
                update_time_ms: 0,
            },
            version: "1".into(),
            has_text: true,
        }
    }

    fn scanned(page: u32, text: &str) -> ScannedPage {
        ScannedPage {
            page,
            text: text.into(),
            confidence: 0.9,
        }
    }

    #[test]
    fn blank_pages_of_a_pdf_and_a_textless_image_are_read() {
        let pdf = ExtractedText {
            text: "first\n\n \n\nthird\n\n".into(),
            page_starts: vec![0, 7, 10, 17],
            metadata: Vec::new(),
        };
        assert_eq!(pages_to_read(&doc("application/pdf"), &pdf), vec![2, 4]);
        assert_eq!(
            pages_to_read(&doc("image/png"), &ExtractedText::default()),
            vec![1]
        );
        assert!(pages_to_read(&doc("image/svg+xml"), &ExtractedText::default()).is_empty());
        assert!(pages_to_read(&doc("text/plain"), &ExtractedText::default()).is_empty());
    }

    #[test]
    fn read_pages_take_their_place_and_the_metadata_says_ocr() {
        let mut pdf = ExtractedText {
            text: "first\n\n\n\nthird".into(),
            page_starts: vec![0, 7, 9],
            metadata: vec![("pages_without_text".into(), "1".into())],
        };
        merge(&mut pdf, &[scanned(2, "second page")]);
        let pages = split_pages(&pdf.text, &pdf.page_starts);
        assert_eq!(pages.len(), 3);
        assert_eq!(pages[1].trim(), "second page");
        assert_eq!(pages[2], "third");
        let meta = |k: &str| {
            pdf.metadata
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(meta("text_source").as_deref(), Some("text and ocr"));
        assert_eq!(meta("ocr_confidence").as_deref(), Some("0.900"));
        assert_eq!(meta("pages_without_text"), None);

        let mut image = ExtractedText::default();
        merge(&mut image, &[scanned(1, "receipt total 42")]);
        assert_eq!(image.text, "receipt total 42");
        assert!(image.page_starts.is_empty());
        assert!(
            image
                .metadata
                .contains(&("text_source".into(), "ocr".into()))
        );
    }
}
