//! Private keys in their text forms: PEM (`-----BEGIN ... PRIVATE KEY-----`: PKCS#1, PKCS#8,
//! SEC1, OpenSSH, PGP, encrypted or not), SSH2 (`---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`) and
//! PuTTY's `.ppk`, also inside JSON strings (`\n` escapes). A header alone, as prose about keys
//! or an example cut short shows it, is not a key: the body must hold at least [`MIN_BODY`]
//! characters of base64. Public keys and certificates have other labels and are never matched.

use std::ops::Range;

/// The keywords that start a key (lowercase; the prefilter ignores case).
pub(crate) const KEYWORDS: &[&str] = &["-----begin ", "---- begin ssh2 ", "putty-user-key-file-"];

/// Base64 characters a key's body holds at least.
const MIN_BODY: usize = 40;
/// How far a key's body is followed, at most.
const MAX_KEY: usize = 64 << 10;
/// How long a label (`RSA PRIVATE KEY`) may be.
const MAX_LABEL: usize = 48;

/// The private key starting at byte `pos` of `text` (where one of [`KEYWORDS`] was found), as the
/// span from its header to the end of its body (its footer when there is one).
pub(crate) fn private_key_at(text: &str, pos: usize) -> Option<Range<usize>> {
    let rest = text.get(pos..)?;
    let body = if let Some(after) = rest.strip_prefix("-----BEGIN ") {
        labelled_body(after, "-----")?
    } else if let Some(after) = rest.strip_prefix("---- BEGIN SSH2 ") {
        labelled_body(after, " ----")?
    } else if rest.starts_with("PuTTY-User-Key-File-") {
        putty_body(rest)?
    } else {
        return None;
    };
    let body_start = pos + (rest.len() - body.len());
    let end = body_end(text, body_start)?;
    Some(pos..end)
}

/// After `-----BEGIN `: the text after the header when its label names a private key.
fn labelled_body<'t>(after: &'t str, closing: &str) -> Option<&'t str> {
    let window = &after[..after.len().min(MAX_LABEL + closing.len())];
    let close = window.find(closing)?;
    let label = &after[..close];
    let private = label.ends_with("PRIVATE KEY")
        || label.ends_with("PRIVATE KEY BLOCK")
        || label == "ENCRYPTED PRIVATE KEY";
    (private
        && label
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' '))
    .then(|| &after[close + closing.len()..])
}

/// A PuTTY key file's private lines: what follows the `Private-Lines:` line within 4 KiB.
fn putty_body(rest: &str) -> Option<&str> {
    let head = &rest[..rest.floor_char_boundary(rest.len().min(4096))];
    let at = head.find("Private-Lines:")?;
    let line_end = rest[at..].find('\n')? + at + 1;
    Some(&rest[line_end..])
}

/// Where the body starting at `start` ends: after its footer, or after the last base64
/// character; `None` when it holds fewer than [`MIN_BODY`] of them.
fn body_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let limit = text.len().min(start.saturating_add(MAX_KEY));
    let mut i = start;
    let mut base64 = 0usize;
    let mut last = start;
    let mut line_start = true;
    while i < limit {
        let b = bytes[i];
        if b == b'\\' && matches!(bytes.get(i + 1), Some(b'n' | b'r')) {
            i += 2;
            line_start = true;
            continue;
        }
        if b.is_ascii_whitespace() {
            line_start |= b == b'\n';
            i += 1;
            continue;
        }
        if line_start
            && base64 == 0
            && let Some(skip) = header_line(&bytes[i..limit])
        {
            i += skip;
            continue;
        }
        line_start = false;
        if b == b'-' {
            return (base64 >= MIN_BODY).then(|| footer_end(bytes, i, limit));
        }
        if !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')) {
            break;
        }
        base64 += 1;
        i += 1;
        last = i;
    }
    (base64 >= MIN_BODY).then_some(last)
}

/// The length of a PEM or PGP header line (`Proc-Type: 4,ENCRYPTED`, `Version: GnuPG`,
/// `Comment: ...`) at the start of `rest`, up to its line end (a newline or a `\n` escape).
fn header_line(rest: &[u8]) -> Option<usize> {
    let colon = rest.iter().take(32).position(|&b| b == b':')?;
    let name = &rest[..colon];
    if name.is_empty() || !name.iter().all(|b| b.is_ascii_alphabetic() || *b == b'-') {
        return None;
    }
    let end = rest
        .windows(2)
        .position(|w| w[0] == b'\n' || (w[0] == b'\\' && matches!(w[1], b'n' | b'r')))
        .unwrap_or(rest.len());
    Some(end.max(colon + 1))
}

/// The end of a footer (`-----END RSA PRIVATE KEY-----`) starting at `at`: after its closing
/// dashes, or `at` itself when what starts there is not one.
fn footer_end(bytes: &[u8], at: usize, limit: usize) -> usize {
    let rest = &bytes[at..limit];
    let Some(after) = rest
        .strip_prefix(b"-----END ")
        .or_else(|| rest.strip_prefix(b"---- END "))
    else {
        return at;
    };
    let head = &after[..after.len().min(MAX_LABEL + 5)];
    match head.windows(4).position(|w| w == b"----") {
        Some(close) => {
            let mut end = at + (rest.len() - after.len()) + close;
            while end < limit && bytes[end] == b'-' {
                end += 1;
            }
            end
        }
        None => at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = "MIIEowIBAAKCAQEAvNlbBm7m3xQ4gJ0kYq7LzS9h1K3y0Z8v2pQdX5uT9wA1cE6r\nb2Hn8sYt4fKq0LmP3jR7vW1xZ5cV9bN2mQ8kL4hG6dS0aF3tY7uI1oP5zX9wE2rT\n";

    fn key(text: &str) -> Option<&str> {
        let pos = text.find(['-', 'P'])?;
        private_key_at(text, pos).map(|span| &text[span])
    }

    #[test]
    fn pem_openssh_and_pgp_private_keys_are_found_with_their_footer() {
        for label in [
            "RSA PRIVATE KEY",
            "PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        ] {
            let text = format!("-----BEGIN {label}-----\n{BODY}-----END {label}-----\nafter");
            let found = key(&text).unwrap_or_else(|| panic!("{label}"));
            assert!(
                found.ends_with(&format!("-----END {label}-----")),
                "{found}"
            );
        }
    }

    #[test]
    fn encrypted_pem_headers_and_json_escapes_are_read_through() {
        let pem = format!(
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n{BODY}-----END RSA PRIVATE KEY-----"
        );
        assert!(key(&pem).is_some());
        let json = format!(
            "{{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n\"}}",
            BODY.replace('\n', "\\n")
        );
        let found = key(&json).expect("a key in a JSON string");
        assert!(found.ends_with("-----END PRIVATE KEY-----"), "{found}");
    }

    #[test]
    fn putty_and_ssh2_keys_are_found() {
        let ppk = format!(
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIOm\nPrivate-Lines: 1\n{BODY}Private-MAC: 0a1b\n"
        );
        assert!(key(&ppk).is_some());
        let ssh2 = format!(
            "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key\"\n{BODY}---- END SSH2 ENCRYPTED PRIVATE KEY ----\n"
        );
        assert!(key(&ssh2).expect("ssh2").ends_with("PRIVATE KEY ----"));
    }

    #[test]
    fn headers_without_a_body_public_keys_and_certificates_are_not_keys() {
        for text in [
            "A private key file starts with -----BEGIN RSA PRIVATE KEY----- and ends with its footer.",
            "-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----",
            "-----BEGIN PRIVATE KEY-----\n<your key here>\n-----END PRIVATE KEY-----",
            &format!("-----BEGIN PUBLIC KEY-----\n{BODY}-----END PUBLIC KEY-----"),
            &format!("-----BEGIN CERTIFICATE-----\n{BODY}-----END CERTIFICATE-----"),
            &format!("-----BEGIN RSA PUBLIC KEY-----\n{BODY}-----END RSA PUBLIC KEY-----"),
        ] {
            assert_eq!(key(text), None, "{text}");
        }
    }
}
