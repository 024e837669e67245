//! Columns: a page set in columns (a newsletter, a paper, a leaflet) is read a column at a time,
//! not row by row across them.
//!
//! A gutter is a band at least half a line's height wide that the lines of text keep out of (a few
//! may cross it: a title, a footer over both columns), with at least three lines of text on each
//! side, side by side. The lines that cross it cut the page into bands; each band reads its left
//! side, then its right, and each side is looked at again for columns of its own. Short rows (a
//! table's cells, a form's labels and values) are no column: they stay read row by row; a row
//! of justified text that detection split at its wide spaces counts at its whole width.

use quarry_core::ocr::TextLine;

/// The fewest lines on each side of a gutter.
const MIN_COLUMN_LINES: usize = 3;
/// A column's rows are at least this many times as wide as its lines are high, as a median:
/// text, not a table's cells.
const MIN_COLUMN_LINE_SHAPE: u32 = 4;

/// The lines in groups read one after another: the columns of each band, top to bottom and left
/// to right, and the lines that cross the columns, each in its place. A page without columns is
/// one group.
pub(crate) fn blocks(lines: Vec<TextLine>) -> Vec<Vec<TextLine>> {
    let Some(gutter) = gutter(&lines) else {
        return vec![lines];
    };
    let (mut crossing, mut sides): (Vec<TextLine>, Vec<TextLine>) =
        lines.into_iter().partition(|l| crosses(l, gutter));
    crossing.sort_by_key(|l| l.bounds[1]);
    sides.sort_by_key(centre_y);
    let mut sides = sides.into_iter().peekable();
    let mut out = Vec::new();
    let mut bands = crossing.into_iter().map(Some).collect::<Vec<_>>();
    bands.push(None);
    for cut in bands {
        // The lines above this crossing line (all that are left, after the last).
        let above = cut
            .as_ref()
            .map_or(u32::MAX, |c| c.bounds[1] + c.bounds[3] / 2);
        let mut band = Vec::new();
        while let Some(line) = sides.next_if(|l| centre_y(l) < above) {
            band.push(line);
        }
        let (left, right): (Vec<TextLine>, Vec<TextLine>) =
            band.into_iter().partition(|l| centre_x(l) < gutter.0);
        for side in [left, right] {
            if !side.is_empty() {
                out.extend(blocks(side));
            }
        }
        out.extend(cut.map(|line| vec![line]));
    }
    out
}

/// The widest gutter of `lines` (its left and right edge), if they stand in columns.
fn gutter(lines: &[TextLine]) -> Option<(u32, u32)> {
    if lines.len() < 2 * MIN_COLUMN_LINES {
        return None;
    }
    let height = median(lines.iter().map(|l| l.bounds[3]));
    // Up to one line in eight, or two, may cross a gutter (titles, footers, captions over the
    // columns).
    let most_crossing = (lines.len() / 8).max(2);
    let mut edges: Vec<u32> = lines.iter().flat_map(|l| [left(l), right(l)]).collect();
    edges.sort_unstable();
    edges.dedup();
    // How many lines cover each stretch of the page's width between two edges.
    let covered: Vec<(u32, u32, usize)> = edges
        .windows(2)
        .map(|pair| {
            let (x0, x1) = (pair[0], pair[1]);
            let covering = lines
                .iter()
                .filter(|l| left(l) <= x0 && right(l) >= x1)
                .count();
            (x0, x1, covering)
        })
        .collect();
    // Within each run of stretches few lines cover, the longest part that the fewest cover:
    // the ragged ends of a column's lines reach into a run, the gutter is what they leave.
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for run in covered
        .chunk_by(|a, b| a.1 == b.0 && a.2 <= most_crossing && b.2 <= most_crossing)
        .filter(|run| run.iter().all(|s| s.2 <= most_crossing))
    {
        let fewest = run.iter().map(|s| s.2).min().unwrap_or(0);
        let widest = run
            .chunk_by(|a, b| a.2 == fewest && b.2 == fewest)
            .filter(|part| part.iter().all(|s| s.2 == fewest))
            .map(|part| (part[0].0, part[part.len() - 1].1))
            .max_by_key(|&(x0, x1)| x1 - x0);
        runs.extend(widest);
    }
    runs.into_iter()
        .filter(|&(x0, x1)| 2 * (x1 - x0) >= height)
        .filter(|&run| stands_in_columns(lines, run, height))
        .max_by_key(|&(x0, x1)| x1 - x0)
}

/// Whether the lines on either side of `run` are columns of text standing side by side.
fn stands_in_columns(lines: &[TextLine], run: (u32, u32), height: u32) -> bool {
    let (left_side, right_side): (Vec<&TextLine>, Vec<&TextLine>) = lines
        .iter()
        .filter(|l| !crosses(l, run))
        .partition(|l| centre_x(l) < run.0);
    let column = |side: &[&TextLine]| {
        let rows = row_widths(side);
        rows.len() >= MIN_COLUMN_LINES && median(rows.into_iter()) >= MIN_COLUMN_LINE_SHAPE * height
    };
    if !column(&left_side) || !column(&right_side) {
        return false;
    }
    // Side by side: their heights overlap by half the shorter one at least.
    let span = |side: &[&TextLine]| {
        let top = side.iter().map(|l| l.bounds[1]).min().unwrap_or(0);
        let bottom = side.iter().map(|l| bottom(l)).max().unwrap_or(0);
        (top, bottom)
    };
    let (a, b) = (span(&left_side), span(&right_side));
    let overlap = a.1.min(b.1).saturating_sub(a.0.max(b.0));
    overlap * 2 >= (a.1 - a.0).min(b.1 - b.0)
}

/// The widths of the rows `lines` stand in, each from its first line's left to its last one's
/// right: justified text split at its wide spaces still makes wide rows.
fn row_widths(lines: &[&TextLine]) -> Vec<u32> {
    let mut lines = lines.to_vec();
    lines.sort_by_key(|l| centre_y(l));
    let mut rows: Vec<(u32, u32, u32, u32)> = Vec::new(); // top, bottom, left, right
    for line in lines {
        match rows.last_mut() {
            Some(row) if (row.0..=row.1).contains(&centre_y(line)) => {
                row.2 = row.2.min(left(line));
                row.3 = row.3.max(right(line));
            }
            _ => rows.push((line.bounds[1], bottom(line), left(line), right(line))),
        }
    }
    rows.into_iter().map(|r| r.3 - r.2).collect()
}

/// Whether `line` crosses the middle of `gutter`.
fn crosses(line: &TextLine, gutter: (u32, u32)) -> bool {
    let middle = gutter.0 + (gutter.1 - gutter.0) / 2;
    left(line) < middle && right(line) > middle
}

fn left(line: &TextLine) -> u32 {
    line.bounds[0]
}

fn right(line: &TextLine) -> u32 {
    line.bounds[0] + line.bounds[2]
}

fn bottom(line: &TextLine) -> u32 {
    line.bounds[1] + line.bounds[3]
}

fn centre_x(line: &TextLine) -> u32 {
    line.bounds[0] + line.bounds[2] / 2
}

fn centre_y(line: &TextLine) -> u32 {
    line.bounds[1] + line.bounds[3] / 2
}

fn median(values: impl Iterator<Item = u32>) -> u32 {
    let mut values: Vec<u32> = values.collect();
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A line of `text` 20 pixels high, at `left`, `top`, `width` wide.
    pub(crate) fn line(text: &str, left: u32, top: u32, width: u32) -> TextLine {
        TextLine {
            text: text.to_owned(),
            confidence: 0.9,
            bounds: [left, top, width, 20],
            spans: Vec::new(),
        }
    }

    /// `rows` lines of a column at `left`, 300 wide, from `top`, named `name0`, `name1`…
    fn column(name: &str, left: u32, top: u32, rows: u32) -> Vec<TextLine> {
        (0..rows)
            .map(|i| line(&format!("{name}{i}"), left, top + 25 * i, 300))
            .collect()
    }

    fn texts(blocks: &[Vec<TextLine>]) -> Vec<Vec<&str>> {
        blocks
            .iter()
            .map(|b| b.iter().map(|l| l.text.as_str()).collect())
            .collect()
    }

    #[test]
    fn two_columns_under_a_title_are_read_one_after_the_other_and_a_footer_last() {
        let mut lines = vec![line("title", 10, 10, 640), line("footer", 10, 400, 640)];
        lines.extend(column("right", 350, 50, 4));
        lines.extend(column("left", 10, 52, 4));
        let blocks = blocks(lines);
        let read = texts(&blocks);
        assert_eq!(read.len(), 4, "{read:?}");
        assert_eq!(read[0], ["title"]);
        assert_eq!(read[1].len(), 4);
        assert!(read[1].iter().all(|t| t.starts_with("left")), "{read:?}");
        assert!(read[2].iter().all(|t| t.starts_with("right")), "{read:?}");
        assert_eq!(read[3], ["footer"]);
    }

    #[test]
    fn the_ragged_ends_of_a_columns_lines_are_not_taken_for_lines_across_the_gutter() {
        // Left lines end at 310 to 390, the right column starts at 420.
        let widths = [300, 380, 250, 300, 370, 300, 280, 300];
        let mut lines: Vec<TextLine> = widths
            .iter()
            .zip(0u32..)
            .map(|(&w, i)| line(&format!("left{i}"), 10, 50 + 25 * i, w))
            .collect();
        lines.extend(column("right", 420, 50, 8));
        let blocks = blocks(lines);
        let read = texts(&blocks);
        assert_eq!(read.len(), 2, "{read:?}");
        assert!(read[0].iter().all(|t| t.starts_with("left")), "{read:?}");
        assert!(read[1].iter().all(|t| t.starts_with("right")), "{read:?}");
    }

    #[test]
    fn a_column_of_justified_rows_split_at_their_wide_spaces_is_still_a_column() {
        let mut lines = Vec::new();
        for row in 0..5 {
            for word in 0..3 {
                let name = format!("left{row}.{word}");
                lines.push(line(&name, 10 + 120 * word, 50 + 25 * row, 60));
            }
        }
        lines.extend(column("right", 400, 50, 5));
        let blocks = blocks(lines);
        let read = texts(&blocks);
        assert_eq!(read.len(), 2, "{read:?}");
        assert!(read[0].iter().all(|t| t.starts_with("left")), "{read:?}");
    }

    #[test]
    fn three_columns_are_read_left_to_right() {
        let mut lines = column("c", 700, 50, 5);
        lines.extend(column("b", 360, 50, 5));
        lines.extend(column("a", 10, 50, 5));
        let firsts: Vec<char> = blocks(lines)
            .iter()
            .map(|b| b[0].text.chars().next().unwrap_or(' '))
            .collect();
        assert_eq!(firsts, ['a', 'b', 'c']);
    }

    #[test]
    fn a_table_or_a_form_of_short_cells_stays_one_block() {
        // Labels and values: short, in two rows of four.
        let mut lines = Vec::new();
        for row in 0..4 {
            lines.push(line(&format!("label{row}"), 10, 20 + 25 * row, 60));
            lines.push(line(&format!("value{row}"), 300, 20 + 25 * row, 60));
        }
        assert_eq!(blocks(lines).len(), 1);
    }

    #[test]
    fn one_column_with_a_short_last_line_is_one_block() {
        let mut lines = column("text", 10, 10, 8);
        lines.push(line("end.", 10, 210, 40));
        assert_eq!(blocks(lines).len(), 1);
    }
}
