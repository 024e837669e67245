//! Asking the user at the terminal before doing what cannot be taken back.

use std::io::{BufRead, IsTerminal, Write};

/// Whether there is a terminal to ask on.
pub fn can_ask() -> bool {
    std::io::stdin().is_terminal()
}

/// Asks a yes/no question on the terminal; false when there is none to ask on.
pub fn confirm(question: &str) -> anyhow::Result<bool> {
    if !can_ask() {
        return Ok(false);
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
