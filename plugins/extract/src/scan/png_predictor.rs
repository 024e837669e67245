//! PNG row filters, which PDF's `FlateDecode` images may carry (`/DecodeParms` with a
//! `/Predictor` of 10 or more: img2pdf copies a PNG's data this way).

/// Undoes the PNG filters of `data`: rows of `row_bytes` bytes each preceded by a filter
/// byte, pixels of `bpp` bytes. Answers the rows without their filter bytes.
pub fn unfilter(data: &[u8], row_bytes: usize, bpp: usize) -> Result<Vec<u8>, String> {
    let stride = row_bytes + 1;
    if row_bytes == 0 || !data.len().is_multiple_of(stride) {
        return Err(format!(
            "{} bytes are not rows of {row_bytes} bytes with a filter byte each",
            data.len()
        ));
    }
    let rows = data.len() / stride;
    let mut out = vec![0u8; rows * row_bytes];
    for r in 0..rows {
        let filter = data[r * stride];
        let line = &data[r * stride + 1..(r + 1) * stride];
        let (done, rest) = out.split_at_mut(r * row_bytes);
        let previous = if r == 0 {
            None
        } else {
            Some(&done[(r - 1) * row_bytes..])
        };
        let current = &mut rest[..row_bytes];
        for i in 0..row_bytes {
            let left = if i >= bpp { current[i - bpp] } else { 0 };
            let up = previous.map_or(0, |p| p[i]);
            let up_left = if i >= bpp {
                previous.map_or(0, |p| p[i - bpp])
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => paeth(left, up, up_left),
                other => return Err(format!("unknown PNG filter {other} in row {r}")),
            };
            current[i] = line[i].wrapping_add(predicted);
        }
    }
    Ok(out)
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_filter_gives_back_the_rows() {
        // Row 1 raw; row 2 "sub" (left); row 3 "up"; row 4 "average"; row 5 "paeth".
        let data = [
            0, 10, 20, 30, //
            1, 5, 1, 1, //
            2, 1, 1, 1, //
            3, 3, 1, 1, //
            4, 0, 0, 0,
        ];
        let rows = unfilter(&data, 3, 1).expect("rows");
        assert_eq!(&rows[0..3], &[10, 20, 30]);
        assert_eq!(&rows[3..6], &[5, 6, 7]);
        assert_eq!(&rows[6..9], &[6, 7, 8]);
        assert_eq!(&rows[9..12], &[6, 7, 8]);
        assert_eq!(&rows[12..15], &[6, 7, 8]);
    }

    #[test]
    fn data_that_is_not_whole_rows_is_refused() {
        assert!(unfilter(&[0, 1, 2], 3, 1).is_err());
        assert!(unfilter(&[9, 1, 2, 3], 3, 1).is_err());
    }
}
