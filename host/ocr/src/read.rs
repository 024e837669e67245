//! Text recognition (PP-OCR's CTC model) of the lines detection found, and the orientation
//! classifier that tells an upright line from one upside down.

use ort::session::Session;

use crate::detect::LineBox;
use crate::onnx::{run, settle};
use crate::raster::{Raster, normalized_channels};

/// The height lines are scaled to for recognition.
const LINE_HEIGHT: usize = 48;
/// The narrowest input recognition takes (PP-OCR's 320 pixels): shorter lines are padded.
const MIN_LINE_WIDTH: usize = 320;
/// The widest: a longer line is squeezed to it (50 times its height).
const MAX_LINE_WIDTH: usize = 2400;
/// Lines recognized in one run of the model.
const BATCH: usize = 8;
/// A line read with a lower mean confidence is dropped (PP-OCR's `text_score`).
const MIN_LINE_CONFIDENCE: f32 = 0.5;
/// The orientation classifier's input size.
const CLS_WIDTH: usize = 192;

/// A line read: its text and mean confidence, the number of characters it was averaged over,
/// and where each character of the text is across the line's box (pixels from its left edge).
pub(crate) struct Read {
    pub text: String,
    pub confidence: f32,
    pub chars: usize,
    pub spans: Vec<[f32; 2]>,
}

/// The recognition model's alphabet: index 0 is CTC's blank, then the dictionary, then a space.
pub(crate) struct Alphabet(Vec<String>);

impl Alphabet {
    /// The alphabet of a dictionary, one character per line.
    pub fn new(dictionary: &str) -> Alphabet {
        let mut symbols = vec![String::new()];
        symbols.extend(dictionary.lines().map(str::to_owned));
        symbols.push(" ".to_owned());
        Alphabet(symbols)
    }

    /// How many classes the model must answer for this alphabet.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Greedy CTC decoding of one line's `steps x classes` probabilities; each character is
    /// placed at the step it was read at, `step_width` pixels of the line's box a step.
    fn decode(&self, probs: &[f32], classes: usize, step_width: f32) -> Read {
        let (mut sum, mut chars) = (0.0f32, 0usize);
        let mut previous = 0usize;
        // Each character read and the step it was read at.
        let mut read: Vec<(char, usize)> = Vec::new();
        for (at, step) in probs.chunks_exact(classes).enumerate() {
            let (best, p) = step
                .iter()
                .copied()
                .enumerate()
                .fold((0, f32::MIN), |a, b| if b.1 > a.1 { b } else { a });
            if best != 0
                && best != previous
                && let Some(symbol) = self.0.get(best)
            {
                read.extend(symbol.chars().map(|c| (c, at)));
                sum += p;
                chars += 1;
            }
            previous = best;
        }
        let start = read.iter().position(|(c, _)| !c.is_whitespace());
        let end = read.iter().rposition(|(c, _)| !c.is_whitespace());
        let read = match (start, end) {
            (Some(start), Some(end)) => &read[start..=end],
            _ => &[],
        };
        let confidence = if chars == 0 { 0.0 } else { sum / chars as f32 };
        Read {
            text: read.iter().map(|(c, _)| c).collect(),
            confidence,
            chars,
            spans: spans(read.iter().map(|(_, at)| *at), step_width),
        }
    }
}

/// Each character's left and right edge, in pixels, from the steps (`step_width` pixels each)
/// they were read at: the edges lie halfway between neighbours' steps, and the first and last
/// reach as far out as their neighbour is away.
fn spans(steps: impl Iterator<Item = usize>, step_width: f32) -> Vec<[f32; 2]> {
    let centres: Vec<f32> = steps.map(|s| (s as f32 + 0.5) * step_width).collect();
    (0..centres.len())
        .map(|i| {
            let c = centres[i];
            let gap_before = i.checked_sub(1).map(|j| c - centres[j]);
            let gap_after = centres.get(i + 1).map(|next| next - c);
            let before = gap_before.or(gap_after).unwrap_or(step_width);
            let after = gap_after.or(gap_before).unwrap_or(step_width);
            [(c - before / 2.0).max(0.0), c + after / 2.0]
        })
        .collect()
}

/// The width a `width x height` crop takes at [`LINE_HEIGHT`].
fn scaled_width(width: usize, height: usize) -> usize {
    (width * LINE_HEIGHT)
        .div_ceil(height.max(1))
        .clamp(1, MAX_LINE_WIDTH)
}

/// Appends a line's crop scaled to `LINE_HEIGHT x own_width` and padded to `width`.
fn push_line(page: &Raster, b: &LineBox, own_width: usize, width: usize, input: &mut Vec<f32>) {
    let scaled = page.scaled_region((b.left, b.top, b.width, b.height), own_width, LINE_HEIGHT);
    let mut padded = vec![127.5f32; LINE_HEIGHT * width];
    for (row, values) in scaled.chunks_exact(own_width).enumerate() {
        padded[row * width..row * width + own_width].copy_from_slice(values);
    }
    normalized_channels(&padded, input);
}

/// Reads each of `boxes` in `page`; one answer per box, `None` for a line not read with enough
/// confidence.
pub(crate) fn lines(
    session: &mut Session,
    alphabet: &Alphabet,
    page: &Raster,
    boxes: &[LineBox],
) -> Result<Vec<Option<Read>>, String> {
    // A page without lines (a photo) runs nothing, so has no output to settle either.
    if boxes.is_empty() {
        return Ok(Vec::new());
    }
    let widths: Vec<usize> = boxes
        .iter()
        .map(|b| scaled_width(b.width, b.height))
        .collect();
    // Lines of similar widths run together, so that little of a batch is padding.
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by_key(|&i| widths[i]);
    let mut out: Vec<Option<Read>> = boxes.iter().map(|_| None).collect();
    for batch in order.chunks(BATCH) {
        let width = batch
            .iter()
            .map(|&i| widths[i])
            .max()
            .unwrap_or(1)
            .max(MIN_LINE_WIDTH);
        let mut input = Vec::with_capacity(batch.len() * 3 * LINE_HEIGHT * width);
        for &i in batch {
            push_line(page, &boxes[i], widths[i], width, &mut input);
        }
        let reads = run(
            session,
            [batch.len(), 3, LINE_HEIGHT, width],
            input,
            |shape, probs| {
                let classes = usize::try_from(*shape.last().unwrap_or(&0)).unwrap_or(0);
                if classes != alphabet.len() || probs.len() % (batch.len() * classes) != 0 {
                    return Err(format!(
                        "the recognition model answered {shape:?} for an alphabet of {}",
                        alphabet.len()
                    ));
                }
                let per_line = probs.len() / batch.len();
                // The model reads the padded input in equal steps across.
                let step_width = width as f32 / (per_line / classes).max(1) as f32;
                Ok(probs
                    .chunks_exact(per_line)
                    .map(|line| alphabet.decode(line, classes, step_width))
                    .collect::<Vec<_>>())
            },
        )??;
        for (&i, mut read) in batch.iter().zip(reads) {
            if read.confidence >= MIN_LINE_CONFIDENCE && !read.text.is_empty() {
                // From the crop scaled to the model's height back to the page.
                let (b, own) = (&boxes[i], widths[i] as f32);
                let to_page = b.width as f32 / own;
                for span in &mut read.spans {
                    *span = span.map(|x| b.left as f32 + x.min(own) * to_page);
                }
                out[i] = Some(read);
            }
        }
    }
    settle(session, [1, 3, LINE_HEIGHT, MIN_LINE_WIDTH])?;
    Ok(out)
}

/// The probability that each of `boxes` is upside down, by the orientation classifier.
pub(crate) fn upside_down(
    session: &mut Session,
    page: &Raster,
    boxes: &[LineBox],
) -> Result<Vec<f32>, String> {
    if boxes.is_empty() {
        return Ok(Vec::new());
    }
    let mut input = Vec::with_capacity(boxes.len() * 3 * LINE_HEIGHT * CLS_WIDTH);
    for b in boxes {
        let own = scaled_width(b.width, b.height).min(CLS_WIDTH);
        push_line(page, b, own, CLS_WIDTH, &mut input);
    }
    run(
        session,
        [boxes.len(), 3, LINE_HEIGHT, CLS_WIDTH],
        input,
        |shape, probs| {
            if probs.len() != boxes.len() * 2 {
                return Err(format!("the orientation model answered {shape:?}"));
            }
            Ok(probs.chunks_exact(2).map(|p| p[1]).collect())
        },
    )?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctc_drops_blanks_and_repeats_but_keeps_letters_split_by_a_blank() {
        let alphabet = Alphabet::new("a\nb");
        assert_eq!(alphabet.len(), 4); // blank, a, b, space
        let step = |class: usize| {
            let mut p = vec![0.0; 4];
            p[class] = 0.9;
            p
        };
        let probs: Vec<f32> = [1, 1, 0, 1, 2, 3, 2, 0]
            .into_iter()
            .flat_map(step)
            .collect();
        let read = alphabet.decode(&probs, 4, 8.0);
        assert_eq!(read.text, "aab b");
        assert_eq!(read.chars, 5);
        assert!((read.confidence - 0.9).abs() < 1e-6);
        // Read at steps 0, 3, 4, 5 and 6 of 8 pixels: each character reaches halfway to its
        // neighbours, the first as far out as its one neighbour is away.
        assert_eq!(
            read.spans,
            [
                [0.0, 16.0],
                [16.0, 32.0],
                [32.0, 40.0],
                [40.0, 48.0],
                [48.0, 56.0]
            ]
        );
    }

    #[test]
    fn lines_keep_their_shape_within_bounds() {
        assert_eq!(scaled_width(480, 48), 480);
        assert_eq!(scaled_width(100, 96), 50);
        assert_eq!(scaled_width(100_000, 10), MAX_LINE_WIDTH);
    }
}
