//! A view: a text read from part of another (a quoted block without its markers, joined
//! literals as one string), and how what is found in it maps back to the text it came from.

use std::ops::Range;

/// A text read from part of another.
pub(crate) struct View {
    /// The text it reads.
    pub text: String,
    /// Where it stands in the text it came from.
    pub origin: Range<usize>,
    /// For each piece of `text` copied as it is, where the piece starts in `text` and in the
    /// text it came from: a secret maps back to its own bytes. Empty: a secret maps to the
    /// whole origin.
    pub pieces: Vec<(usize, usize)>,
}

impl View {
    /// Where `span` of the view stands in the text it came from.
    pub(crate) fn origin_of(&self, span: &Range<usize>) -> Range<usize> {
        if self.pieces.is_empty() || span.is_empty() {
            return self.origin.clone();
        }
        let at = |offset: usize| {
            let piece = self
                .pieces
                .partition_point(|&(view, _)| view <= offset)
                .saturating_sub(1);
            let (view, origin) = self.pieces[piece];
            origin + (offset - view)
        };
        at(span.start)..at(span.end - 1) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_of_a_view_maps_to_the_bytes_it_copies_across_pieces() {
        // "> abc\n> def\n" read as "abc\ndef\n".
        let view = View {
            text: "abc\ndef\n".to_owned(),
            origin: 0..12,
            pieces: vec![(0, 2), (4, 8)],
        };
        assert_eq!(view.origin_of(&(1..2)), 3..4);
        assert_eq!(view.origin_of(&(1..7)), 3..11);
        let whole = View {
            pieces: Vec::new(),
            ..view
        };
        assert_eq!(whole.origin_of(&(1..7)), 0..12);
    }
}
