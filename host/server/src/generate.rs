//! `quarry generate`: the manual page and shell completions, made from the command line's own
//! definition so that they never drift from it (the package and `make install` ship them).

use std::io::Write;

use anyhow::Context;
use clap_complete::Shell;

/// Prints `what` (`man`, `bash`, `zsh` or `fish`) for `command` to standard output.
pub fn run(mut command: clap::Command, what: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let shell = match what {
        "man" => {
            clap_mangen::Man::new(command)
                .render(&mut out)
                .context("writing the manual page")?;
            return out.flush().context("writing the manual page");
        }
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        other => anyhow::bail!("{other:?}: generate man, bash, zsh or fish"),
    };
    clap_complete::generate(shell, &mut command, "quarry", &mut out);
    out.flush().context("writing the completions")
}
