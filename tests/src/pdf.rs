//! Writes small but well-formed PDFs: one text line per string, Helvetica, one page per entry,
//! content streams optionally Flate-compressed as most real PDFs are.

use std::io::Write;

use flate2::Compression;
use flate2::write::ZlibEncoder;

/// A PDF whose page `i` shows the lines `pages[i]`, with `title` in its information dictionary.
pub fn pdf(title: &str, pages: &[&[&str]], compress: bool) -> Vec<u8> {
    let mut objects: Vec<Vec<u8>> = Vec::new();
    // 1: catalog, 2: pages, 3: font, 4: info; then a (page, contents) pair per page.
    let first_page = 5;
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", first_page + 2 * i))
        .collect();
    objects.push(b"<< /Type /Catalog /Pages 2 0 R >>".to_vec());
    objects.push(
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        )
        .into_bytes(),
    );
    objects.push(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    );
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
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R /Info 4 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
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
