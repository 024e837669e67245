//! The progress display of `quarry connector sync --wait`: a bar redrawn in place on a terminal,
//! a line every few seconds otherwise (logs, CI).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use quarry_store::Connector;

/// Width of the bar, in characters.
const BAR: usize = 24;

/// How often a line is printed when standard error is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Shows a sync's progress on standard error.
pub struct ProgressDisplay {
    terminal: bool,
    last_line: Option<Instant>,
    drawn: bool,
}

impl ProgressDisplay {
    /// A display for standard error.
    pub fn new() -> ProgressDisplay {
        ProgressDisplay {
            terminal: std::io::stderr().is_terminal(),
            last_line: None,
            drawn: false,
        }
    }

    /// Shows the connector's counts.
    pub fn show(&mut self, c: &Connector) {
        self.show_line(&progress_text(c));
    }

    /// Shows one line of progress.
    pub fn show_line(&mut self, line: &str) {
        let mut err = std::io::stderr().lock();
        if self.terminal {
            // Back to the line's start, clear it, draw.
            let _ = write!(err, "\r\x1b[2K{line}");
            let _ = err.flush();
            self.drawn = true;
        } else if self.last_line.is_none_or(|t| t.elapsed() >= LINE_EVERY) {
            let _ = writeln!(err, "{line}");
            self.last_line = Some(Instant::now());
        }
    }

    /// Ends the display (the bar's line is cleared so the summary starts clean).
    pub fn finish(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
            self.drawn = false;
        }
    }
}

/// `syncing "Notes" [#####-----] 1,200 of 2,000 listed, 56 indexed, 2 failed`, or without the
/// bar and total when the total is unknown.
fn progress_text(c: &Connector) -> String {
    let p = &c.progress;
    let counts = format!(
        "{} indexed, {} failed",
        thousands(p.indexed),
        thousands(p.failed)
    );
    match p.remaining {
        Some(remaining) => {
            let total = p.listed + remaining;
            let filled = (p.listed * BAR as u64)
                .checked_div(total)
                .map_or(BAR, |f| usize::try_from(f).unwrap_or(BAR));
            format!(
                "syncing {:?} [{}{}] {} of ~{} listed, {counts}",
                c.name,
                "#".repeat(filled),
                "-".repeat(BAR - filled.min(BAR)),
                thousands(p.listed),
                thousands(total)
            )
        }
        None => format!(
            "syncing {:?}: {} listed, {counts}",
            c.name,
            thousands(p.listed)
        ),
    }
}

/// `12345` as `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
