//! Plain text: decoding and tidying.

use encoding_rs::{UTF_16BE, UTF_16LE, WINDOWS_1252};

/// Decodes file bytes to text: UTF-8 (with or without a byte-order mark), UTF-16 with a
/// byte-order mark, and anything else as Windows-1252, the usual legacy encoding. Line endings
/// become `\n` and NUL characters are dropped. Valid UTF-8 without either is returned without a
/// copy.
pub fn decode(bytes: Vec<u8>) -> String {
    let text = if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        String::from_utf8_lossy(rest).into_owned()
    } else if bytes.starts_with(b"\xFF\xFE") {
        UTF_16LE.decode_with_bom_removal(&bytes).0.into_owned()
    } else if bytes.starts_with(b"\xFE\xFF") {
        UTF_16BE.decode_with_bom_removal(&bytes).0.into_owned()
    } else {
        utf8_or_windows_1252(bytes)
    };
    normalize_newlines(text)
}

/// The bytes as UTF-8 when they are, else as Windows-1252 (which decodes any bytes).
fn utf8_or_windows_1252(bytes: Vec<u8>) -> String {
    // Most files are UTF-8: check them with SIMD (wasm's simd128), several times the speed of
    // the standard library's check, which counts for a folder of many small text files.
    if simdutf8::basic::from_utf8(&bytes).is_ok() {
        // SAFETY: the bytes were just checked to be valid UTF-8.
        return unsafe { String::from_utf8_unchecked(bytes) };
    }
    WINDOWS_1252
        .decode_without_bom_handling(&bytes)
        .0
        .into_owned()
}

fn normalize_newlines(text: String) -> String {
    if memchr::memchr2(b'\r', 0, text.as_bytes()).is_none() {
        return text;
    }
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\0', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_common_encodings() {
        assert_eq!(decode(b"\xEF\xBB\xBFcaf\xC3\xA9".to_vec()), "café");
        assert_eq!(decode(b"caf\xE9 cr\xE8me".to_vec()), "café crème");
        assert_eq!(decode(b"\xFF\xFEh\0i\0".to_vec()), "hi");
        assert_eq!(decode(b"a\r\nb\rc".to_vec()), "a\nb\nc");
    }
}
