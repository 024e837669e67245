//! IMAP's modified UTF-7 for folder names (RFC 3501, 5.1.3): `&` starts UTF-16 in base64 (with
//! `,` for `/`) up to `-`, and `&-` is `&`. Names are decoded for people; the server's own
//! bytes are what commands send back.

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;

/// `name` for people; a part that does not decode is kept as written.
pub fn decode(name: &[u8]) -> String {
    let text = String::from_utf8_lossy(name);
    let mut out = String::new();
    let mut rest: &str = &text;
    while let Some(start) = rest.find('&') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find('-') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let encoded = &after[..end];
        if encoded.is_empty() {
            out.push('&');
        } else {
            match utf16_of(encoded) {
                Some(decoded) => out.push_str(&decoded),
                None => out.push_str(&rest[start..start + end + 2]),
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn utf16_of(encoded: &str) -> Option<String> {
    let bytes = STANDARD_NO_PAD.decode(encoded.replace(',', "/")).ok()?;
    if bytes.len() % 2 != 0 {
        return None;
    }
    let units: Vec<u16> = bytes
        .chunks(2)
        .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
        .collect();
    String::from_utf16(&units).ok()
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn folder_names_decode() {
        assert_eq!(decode(b"INBOX"), "INBOX");
        assert_eq!(decode(b"Entw&APw-rfe"), "Entw\u{fc}rfe");
        assert_eq!(decode(b"&ZeVnLIqe-"), "\u{65e5}\u{672c}\u{8a9e}");
        assert_eq!(decode(b"Tom &- Jerry"), "Tom & Jerry");
        assert_eq!(decode(b"bad &%%%- name"), "bad &%%%- name");
    }
}
