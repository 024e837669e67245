//! Writes small but well-formed PDFs: one text line per string, Helvetica, one page per entry,
//! content streams optionally Flate-compressed as most real PDFs are.

use std::io::Write;

use flate2::Compression;
use flate2::write::ZlibEncoder;

/// A PDF whose page `i` shows the lines `pages[i]`, with `title` in its information dictionary.
pub fn pdf(title: &str, pages: &[&[&str]], compress: bool) -> Vec<u8> {
    // 1: catalog, 2: pages, 3: font, 4: info; then a (page, contents) pair per page.
    let first_page = 5;
    let mut objects = catalog_pages_font(pages.len(), first_page, 2);
    objects.push(format!("<< /Title ({}) /Producer (quarry-tests) >>", escape(title)).into_bytes());
    for (i, lines) in pages.iter().enumerate() {
        let contents_id = first_page + 2 * i + 1;
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents {contents_id} 0 R >>"
            )
            .into_bytes(),
        );
        let mut ops = String::from("BT /F1 12 Tf 14 TL 72 720 Td\n");
        for line in lines.iter() {
            ops.push_str(&format!("({}) Tj T*\n", escape(line)));
        }
        ops.push_str("ET\n");
        objects.push(stream(ops.as_bytes(), compress));
    }

    assemble(&objects, Some(4))
}

/// A PDF of one page that shows `line` in the font `font` (a font dictionary, object 3), with
/// `streams` after it as objects 6, 7... (uncompressed), for fonts that name them (`6 0 R`).
pub fn in_font(font: &str, streams: &[&[u8]], line: &str) -> Vec<u8> {
    // 1: catalog, 2: pages, 3: the font, 4: the page, 5: its contents, then `streams`.
    let mut objects = catalog_pages_font(1, 4, 2);
    objects[2] = font.as_bytes().to_vec();
    objects.push(
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
           /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>"
            .to_vec(),
    );
    let ops = format!("BT /F1 12 Tf 72 720 Td ({}) Tj ET\n", escape(line));
    objects.push(stream(ops.as_bytes(), false));
    objects.extend(streams.iter().map(|data| stream(data, false)));
    assemble(&objects, None)
}

/// A PDF file of `objects` as written (numbered from 1, the first the catalog): for files
/// built object by object, hostile ones among them.
pub fn of_objects(objects: &[Vec<u8>]) -> Vec<u8> {
    assemble(objects, None)
}

/// A stream object of `data`, Flate-compressed, with `entries` added to its dictionary.
pub fn compressed_stream(data: &[u8], entries: &str) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(data).expect("writing to memory");
    let data = encoder.finish().expect("writing to memory");
    let mut out = format!(
        "<< /Length {} /Filter /FlateDecode {entries} >>\nstream\n",
        data.len()
    )
    .into_bytes();
    out.extend_from_slice(&data);
    out.extend_from_slice(b"\nendstream");
    out
}

/// The first three objects of a PDF of `count` pages: the catalog, the page tree (its pages
/// numbered from `first_page`, `stride` objects apart) and the Helvetica font.
fn catalog_pages_font(count: usize, first_page: usize, stride: usize) -> Vec<Vec<u8>> {
    let kids: Vec<String> = (0..count)
        .map(|i| format!("{} 0 R", first_page + stride * i))
        .collect();
    vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {count} >>",
            kids.join(" ")
        )
        .into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ]
}

/// A PDF file of `objects` (numbered from 1, the first the catalog), with the information
/// dictionary `info` if given.
fn assemble(objects: &[Vec<u8>], info: Option<usize>) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    let info = info.map(|i| format!(" /Info {i} 0 R")).unwrap_or_default();
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A page of [`scanned`]: lines of text, or an image.
pub enum ScanPage<'a> {
    /// Lines of text, as [`pdf`] writes them.
    Text(&'a [&'a str]),
    /// A gray JPEG (`DCTDecode`) of `width x height` pixels, filling the page.
    Jpeg {
        /// The JPEG file.
        data: &'a [u8],
        /// Its width in pixels.
        width: u32,
        /// Its height in pixels.
        height: u32,
    },
    /// An image of `width x height` pixels filling the page, in any encoding: `entries` are its
    /// dictionary's besides the size and length (`/ColorSpace`, `/Filter`, `/DecodeParms`…).
    Image {
        /// The image's data, as its filter reads it.
        data: &'a [u8],
        /// Its width in pixels.
        width: u32,
        /// Its height in pixels.
        height: u32,
        /// The other entries of its dictionary.
        entries: &'a str,
    },
}

/// A PDF of `pages`, as a scanner (or img2pdf) writes image pages: each image page draws one
/// image over the whole page, with no text layer.
pub fn scanned(pages: &[ScanPage<'_>]) -> Vec<u8> {
    // 1: catalog, 2: pages, 3: font; then a (page, contents, image) triple per page.
    let first_page = 4;
    let mut objects = catalog_pages_font(pages.len(), first_page, 3);
    for (i, page) in pages.iter().enumerate() {
        let (contents_id, image_id) = (first_page + 3 * i + 1, first_page + 3 * i + 2);
        let (ops, image) = match page {
            ScanPage::Text(lines) => {
                let mut ops = String::from("BT /F1 12 Tf 14 TL 72 720 Td\n");
                for line in lines.iter() {
                    ops.push_str(&format!("({}) Tj T*\n", escape(line)));
                }
                ops.push_str("ET\n");
                (ops, b"<< >>".to_vec())
            }
            ScanPage::Jpeg {
                data,
                width,
                height,
            } => image_page(
                data,
                *width,
                *height,
                "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode",
            ),
            ScanPage::Image {
                data,
                width,
                height,
                entries,
            } => image_page(data, *width, *height, entries),
        };
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 {image_id} 0 R >> >> \
                 /Contents {contents_id} 0 R >>"
            )
            .into_bytes(),
        );
        objects.push(stream(ops.as_bytes(), false));
        objects.push(image);
    }
    assemble(&objects, None)
}

/// A page's content drawing one image over it, and the image's object.
fn image_page(data: &[u8], width: u32, height: u32, entries: &str) -> (String, Vec<u8>) {
    let mut image = format!(
        "<< /Type /XObject /Subtype /Image /Width {width} /Height {height} {entries} \
         /Length {} >>\nstream\n",
        data.len()
    )
    .into_bytes();
    image.extend_from_slice(data);
    image.extend_from_slice(b"\nendstream");
    ("q 612 0 0 792 0 0 cm /Im1 Do Q\n".to_owned(), image)
}

fn stream(data: &[u8], compress: bool) -> Vec<u8> {
    let (data, filter) = if compress {
        let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(data).expect("writing to memory");
        (
            encoder.finish().expect("writing to memory"),
            " /Filter /FlateDecode",
        )
    } else {
        (data.to_vec(), "")
    };
    let mut out = format!("<< /Length {}{filter} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(&data);
    out.extend_from_slice(b"\nendstream");
    out
}

/// Escapes a PDF literal string (ASCII text).
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)")
}
