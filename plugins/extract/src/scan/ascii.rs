//! The text encodings a PDF stream may wear before its codec (`/Filter [/ASCII85Decode
//! /FlateDecode]`, as some producers write binary data as text): taken off here, so that the
//! codec reads the bytes. Their output is bounded by their input (at most four bytes a
//! character, for ASCII85's `z`), so they need no bound of their own.

/// The bytes of `ASCIIHexDecode` data: pairs of hex digits, white space ignored, `>` the end;
/// an odd last digit is followed by a 0.
pub fn unhex(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(data.len() / 2);
    let mut high: Option<u8> = None;
    for &c in data.iter().take_while(|&&c| c != b'>') {
        if c.is_ascii_whitespace() {
            continue;
        }
        let digit = (c as char)
            .to_digit(16)
            .ok_or_else(|| format!("its ASCIIHex data holds {:?}", c as char))?
            as u8;
        match high.take() {
            Some(h) => out.push(h << 4 | digit),
            None => high = Some(digit),
        }
    }
    out.extend(high.map(|h| h << 4));
    Ok(out)
}

/// The bytes of `ASCII85Decode` data: groups of five characters `!` to `u` for four bytes, `z`
/// for four zeros, white space ignored, `~>` the end; a last group of 2 to 4 characters gives
/// 1 to 3 bytes.
pub fn un85(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(data.len() / 5 * 4);
    let (mut group, mut count) = (0u64, 0usize);
    for &c in data.iter().take_while(|&&c| c != b'~') {
        match c {
            b'z' if count == 0 => out.extend([0; 4]),
            b'!'..=b'u' => {
                group = group * 85 + u64::from(c - b'!');
                count += 1;
                if count == 5 {
                    let word = u32::try_from(group)
                        .map_err(|_| "its ASCII85 data holds a group past 32 bits".to_owned())?;
                    out.extend(word.to_be_bytes());
                    (group, count) = (0, 0);
                }
            }
            c if c.is_ascii_whitespace() => {}
            c => return Err(format!("its ASCII85 data holds {:?}", c as char)),
        }
    }
    match count {
        0 => {}
        1 => return Err("its ASCII85 data ends with a lone character".to_owned()),
        n => {
            // The group is padded with `u` (84); its first n - 1 bytes are kept.
            for _ in n..5 {
                group = group * 85 + 84;
            }
            let word = u32::try_from(group)
                .map_err(|_| "its ASCII85 data holds a group past 32 bits".to_owned())?;
            out.extend(&word.to_be_bytes()[..n - 1]);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_pairs_become_bytes_and_an_odd_digit_is_padded() {
        assert_eq!(unhex(b"48 65\n6c6C6f>ignored"), Ok(b"Hello".to_vec()));
        assert_eq!(unhex(b"7>"), Ok(vec![0x70]));
        assert!(unhex(b"4g").is_err());
    }

    #[test]
    fn ascii85_groups_become_bytes_with_z_and_a_short_last_group() {
        // "Man " and "sure" are the classic examples; "z" is four zeros.
        assert_eq!(un85(b"9jqo^ F*2M7 z~>"), Ok(b"Man sure\0\0\0\0".to_vec()));
        // A last group of three characters gives two bytes.
        assert_eq!(un85(b"9jq~>"), Ok(b"Ma".to_vec()));
        assert!(un85(b"s8W-\"~>").is_err(), "a group past 32 bits");
        assert!(un85(b"9~>").is_err(), "a lone last character");
    }

    #[test]
    fn any_text_decodes_to_a_bounded_output_or_an_error() {
        const ALPHABET: &[u8] = b"0123456789abcdefABCDEF!u~>z \n\x01";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for round in 0..2_000 {
            // Mostly the encodings' own characters, some others.
            let text: Vec<u8> = crate::tests_support::garbage(&mut state, round % 200)
                .into_iter()
                .map(|b| ALPHABET[usize::from(b) % ALPHABET.len()])
                .collect();
            assert!(unhex(&text).map_or(true, |out| out.len() <= text.len()));
            // A `z` is four bytes: the most a character gives.
            assert!(un85(&text).map_or(true, |out| out.len() <= 4 * text.len()));
        }
    }
}
