//! Reading order: a page set in columns is read a column at a time (`columns.rs`); within a
//! column (or a page without columns), lines that share a row are read left to right, rows top
//! to bottom, and a gap taller than a line between rows starts a new block (a blank line in the
//! text), as does each column.

use quarry_core::ocr::TextLine;

use crate::columns;

/// The text of `lines` in reading order, and the lines in that order.
pub(crate) fn reading_order(lines: Vec<TextLine>) -> (String, Vec<TextLine>) {
    let mut text = String::new();
    let mut ordered = Vec::with_capacity(lines.len());
    for block in columns::blocks(lines) {
        let (block_text, block_lines) = rows(block);
        if !text.is_empty() && !block_text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&block_text);
        ordered.extend(block_lines);
    }
    (text, ordered)
}

/// The text of `lines` read row by row, and the lines in that order.
fn rows(mut lines: Vec<TextLine>) -> (String, Vec<TextLine>) {
    lines.sort_by_key(|l| (l.bounds[1] + l.bounds[3] / 2, l.bounds[0]));
    let mut rows: Vec<Vec<TextLine>> = Vec::new();
    for line in lines {
        let (top, bottom) = (line.bounds[1], line.bounds[1] + line.bounds[3]);
        let centre = top + line.bounds[3] / 2;
        match rows.last_mut() {
            Some(row) if row.iter().any(|r| shares_row(r, top, bottom, centre)) => row.push(line),
            _ => rows.push(vec![line]),
        }
    }
    let mut heights: Vec<u32> = rows.iter().flatten().map(|l| l.bounds[3]).collect();
    heights.sort_unstable();
    let typical = heights.get(heights.len() / 2).copied().unwrap_or(0);
    let mut text = String::new();
    let mut ordered = Vec::new();
    let mut previous_bottom: Option<u32> = None;
    for mut row in rows {
        row.sort_by_key(|l| l.bounds[0]);
        let top = row.iter().map(|l| l.bounds[1]).min().unwrap_or(0);
        let bottom = row
            .iter()
            .map(|l| l.bounds[1] + l.bounds[3])
            .max()
            .unwrap_or(0);
        if let Some(previous) = previous_bottom {
            text.push('\n');
            if top > previous && top - previous > typical {
                text.push('\n');
            }
        }
        let words: Vec<&str> = row.iter().map(|l| l.text.as_str()).collect();
        text.push_str(&words.join(" "));
        previous_bottom = Some(bottom);
        ordered.extend(row);
    }
    (text, ordered)
}

/// Whether a line spanning `top..bottom` belongs to the row of `other`: its centre lies within
/// the other's height, and the other's centre within its own.
fn shares_row(other: &TextLine, top: u32, bottom: u32, centre: u32) -> bool {
    let (o_top, o_bottom) = (other.bounds[1], other.bounds[1] + other.bounds[3]);
    let o_centre = o_top + other.bounds[3] / 2;
    (o_top..=o_bottom).contains(&centre) && (top..=bottom).contains(&o_centre)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::tests::line;

    #[test]
    fn rows_read_left_to_right_and_a_tall_gap_starts_a_block() {
        let (text, ordered) = reading_order(vec![
            line("world", 200, 102, 80),
            line("second block", 10, 200, 150),
            line("hello", 10, 100, 80),
            line("next row", 10, 125, 100),
        ]);
        assert_eq!(text, "hello world\nnext row\n\nsecond block");
        assert_eq!(ordered[0].text, "hello");
    }

    #[test]
    fn columns_are_read_one_after_the_other_each_a_block() {
        let mut lines = Vec::new();
        for row in 0..3 {
            let top = 100 + 25 * row;
            lines.push(line(
                &format!("right {row} of the second column"),
                400,
                top,
                300,
            ));
            lines.push(line(
                &format!("left {row} of the first column"),
                10,
                top,
                300,
            ));
        }
        let (text, ordered) = reading_order(lines);
        assert_eq!(
            text,
            "left 0 of the first column\nleft 1 of the first column\nleft 2 of the first column\n\n\
             right 0 of the second column\nright 1 of the second column\nright 2 of the second column"
        );
        assert_eq!(ordered.len(), 6);
    }
}
