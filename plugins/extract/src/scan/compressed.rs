//! A PDF page image's compressed data (Flate, LZW, run-length) expanded within the size its image declares:
//! a stream that expands past it (a bomb) is refused before it holds more.

use std::io::Read;

/// The most bytes a `w x h` image's data may expand to: 4 bytes a pixel, and a PNG predictor's
/// filter byte a row.
fn most_bytes(w: u64, h: u64) -> u64 {
    w * h * 4 + h
}

fn bomb(w: u64, h: u64) -> String {
    format!(
        "its image data expands past the {} bytes a {w}x{h} image can hold",
        most_bytes(w, h)
    )
}

/// Inflates a `w x h` image's Flate data.
pub fn inflate(data: &[u8], w: u64, h: u64) -> Result<Vec<u8>, String> {
    let most = most_bytes(w, h);
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(data)
        .take(most + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("its image data is not valid Flate data: {e}"))?;
    if out.len() as u64 > most {
        return Err(bomb(w, h));
    }
    Ok(out)
}

/// Expands a `w x h` image's LZW data (`LZWDecode`: codes of 9 to 12 bits, most significant
/// bit first, their width growing a code early unless `/EarlyChange 0`).
pub fn unlzw(data: &[u8], w: u64, h: u64, early_change: bool) -> Result<Vec<u8>, String> {
    use weezl::{BitOrder, LzwStatus, decode::Decoder};
    let most = usize::try_from(most_bytes(w, h)).map_err(|e| e.to_string())?;
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let (mut out, mut chunk, mut input) = (Vec::new(), vec![0u8; 64 << 10], data);
    loop {
        let step = decoder.decode_bytes(input, &mut chunk);
        input = &input[step.consumed_in..];
        out.extend_from_slice(&chunk[..step.consumed_out]);
        if out.len() > most {
            return Err(bomb(w, h));
        }
        let stalled = step.consumed_in == 0 && step.consumed_out == 0;
        match step.status {
            Ok(LzwStatus::Done) => break,
            Err(e) => return Err(format!("its image data is not valid LZW data: {e}")),
            // The data ended without its end code: what was decoded is kept, as viewers do.
            Ok(_) if stalled && input.is_empty() => break,
            Ok(_) if stalled => return Err("its image data is not valid LZW data".to_owned()),
            Ok(_) => {}
        }
    }
    Ok(out)
}

/// Expands a `w x h` image's `RunLengthDecode` data: a length byte of 0 to 127 copies the next
/// 1 to 128 bytes, 129 to 255 repeats the next byte 2 to 128 times, 128 ends the data.
pub fn unrun(data: &[u8], w: u64, h: u64) -> Result<Vec<u8>, String> {
    let most = usize::try_from(most_bytes(w, h)).map_err(|e| e.to_string())?;
    let ended = || "its run-length data ends inside a run".to_owned();
    let (mut out, mut at) = (Vec::new(), 0usize);
    while let Some(&length) = data.get(at) {
        let length = usize::from(length);
        match length {
            128 => break,
            0..=127 => {
                out.extend_from_slice(data.get(at + 1..at + 2 + length).ok_or_else(ended)?);
                at += 2 + length;
            }
            _ => {
                let byte = *data.get(at + 1).ok_or_else(ended)?;
                out.resize(out.len() + 257 - length, byte);
                at += 2;
            }
        }
        if out.len() > most {
            return Err(bomb(w, h));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flate_bomb_is_refused_by_the_size_it_declares() {
        use std::io::Write;
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&vec![0u8; 1 << 20]).expect("write");
        let bomb = encoder.finish().expect("finish");
        let refused = inflate(&bomb, 10, 10).expect_err("refused");
        assert!(refused.contains("expands past"), "{refused}");
    }

    fn lzw(data: &[u8], early_change: bool) -> Vec<u8> {
        use weezl::{BitOrder, encode::Encoder};
        let mut encoder = if early_change {
            Encoder::with_tiff_size_switch(BitOrder::Msb, 8)
        } else {
            Encoder::new(BitOrder::Msb, 8)
        };
        encoder.encode(data).expect("encode")
    }

    #[test]
    fn lzw_data_expands_with_either_code_width_switch() {
        let samples: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        assert_eq!(
            unlzw(&lzw(&samples, true), 200, 100, true),
            Ok(samples.clone())
        );
        assert_eq!(unlzw(&lzw(&samples, false), 200, 100, false), Ok(samples));
    }

    #[test]
    fn an_lzw_bomb_is_refused_by_the_size_it_declares() {
        let refused = unlzw(&lzw(&vec![0u8; 1 << 20], true), 10, 10, true).expect_err("refused");
        assert!(refused.contains("expands past"), "{refused}");
        let garbage = unlzw(&[0xff; 64], 10, 10, true).expect_err("refused");
        assert!(garbage.contains("not valid LZW"), "{garbage}");
    }

    #[test]
    fn run_length_data_copies_and_repeats_and_a_bomb_is_refused() {
        // Copy 3 bytes, repeat 7 four times, end; what follows the end is not read.
        let data = [2, 1, 2, 3, 253, 7, 128, 9, 9];
        assert_eq!(unrun(&data, 7, 1), Ok(vec![1, 2, 3, 7, 7, 7, 7]));
        assert!(
            unrun(&[5, 1, 2], 7, 1)
                .expect_err("short")
                .contains("ends inside")
        );
        let bomb: Vec<u8> = [129u8, 0].repeat(10_000);
        let refused = unrun(&bomb, 10, 10).expect_err("refused");
        assert!(refused.contains("expands past"), "{refused}");
    }

    #[test]
    fn garbage_never_expands_past_the_bound_nor_panics() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..2_000 {
            let garbage = crate::tests_support::garbage(&mut state, round % 300);
            let most = super::most_bytes(8, 8) as usize;
            for expanded in [
                inflate(&garbage, 8, 8),
                unlzw(&garbage, 8, 8, round % 2 == 0),
                unrun(&garbage, 8, 8),
            ] {
                assert!(expanded.map_or(true, |out| out.len() <= most));
            }
        }
    }
}
