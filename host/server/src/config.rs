//! The settings file: `~/.config/quarry/config.toml` (XDG; `$QUARRY_CONFIG` names another).
//! It sets any option of the command line that is not a subcommand's own: the data folder, the
//! model, the plugins, and under `[serve]` every option of `quarry serve`. Keys are the flags'
//! names without the dashes in front. A value in the file stands where the flag's default
//! would: the environment overrides it, a flag overrides both.
//!
//! ```toml
//! data-dir = "~/Search"
//! model-dir = "none"
//!
//! [serve]
//! listen = "127.0.0.1:4848"
//! parallel-syncs = 1
//! ```

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::parser::ValueSource;
use clap::{Arg, ArgMatches, ValueHint};
use quarry_runtime::read_bounded_text;
use toml::de::{DeTable, DeValue};

/// The subcommand whose options the file's `[serve]` table sets.
const SERVE: &str = "serve";

/// The settings file's path: `$QUARRY_CONFIG`, else the platform's config folder's
/// `quarry/config.toml`. `QUARRY_CONFIG=none` reads no file.
pub fn path() -> Option<PathBuf> {
    match std::env::var_os("QUARRY_CONFIG") {
        Some(path) if path == "none" => None,
        Some(path) => Some(PathBuf::from(path)),
        None => dirs::config_dir().map(|d| d.join("quarry/config.toml")),
    }
}

/// One setting the file makes.
#[derive(Debug, Clone)]
struct Setting {
    /// `[serve]` or the top level.
    serve: bool,
    /// The option's clap id.
    id: String,
    /// As the flag would take it.
    value: String,
    /// Where it is written (1-based).
    line: usize,
}

/// How the command line was read, for `quarry config` to say where each setting came from.
pub struct Parsed {
    /// The command line's definition, with the file's values as defaults.
    pub command: clap::Command,
    /// What was parsed.
    pub matches: ArgMatches,
    /// The settings file.
    pub settings: Settings,
}

/// The settings file as read: where it is, and what it sets.
#[derive(Debug, Default)]
pub struct Settings {
    file: Option<PathBuf>,
    settings: Vec<Setting>,
}

impl Settings {
    /// Reads the settings file at [`path`], if there is one. A file that cannot be read or
    /// parsed, an unknown key, or a value its option refuses is an error naming the file, the
    /// line and the fix.
    pub fn load(command: &clap::Command) -> anyhow::Result<Settings> {
        match path() {
            Some(path) => load_from(command, path),
            None => Ok(Settings::default()),
        }
    }

    /// `command` with the file's values as its options' defaults.
    pub fn apply(&self, mut command: clap::Command) -> clap::Command {
        for setting in &self.settings {
            let value = setting.value.clone();
            let id = setting.id.clone();
            command = if setting.serve {
                command.mut_subcommand(SERVE, |serve| {
                    serve.mut_arg(id, |arg| arg.default_value(value))
                })
            } else {
                command.mut_arg(id, |arg| arg.default_value(value))
            };
        }
        command
    }

    /// The file read, when one exists.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref().filter(|f| f.is_file())
    }

    /// Where the value of option `arg` (of `[serve]` when `serve`) came from, given the matches
    /// of the command or subcommand that owns it.
    pub fn origin(&self, serve: bool, arg: &Arg, matches: Option<&ArgMatches>) -> Origin {
        let id = arg.get_id().as_str();
        match matches.and_then(|m| m.value_source(id)) {
            Some(ValueSource::CommandLine) => Origin::Flag,
            Some(ValueSource::EnvVariable) => Origin::Environment,
            _ => self
                .settings
                .iter()
                .find(|s| s.serve == serve && s.id == id)
                .map_or(Origin::Default, |s| Origin::File(s.line)),
        }
    }
}

/// Where an effective setting came from, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Nothing named it.
    Default,
    /// Nothing named it, and the installation this binary belongs to ships it.
    Bundled,
    /// The settings file, at this line.
    File(usize),
    /// Its environment variable.
    Environment,
    /// A flag on the command line.
    Flag,
}

/// The options the file may set: the top-level ones (not `--help`, `--version`), and those of
/// `quarry serve` under `[serve]`.
pub fn settable(command: &clap::Command) -> Vec<(bool, &Arg)> {
    let top = command
        .get_arguments()
        .filter(|a| a.get_long().is_some() && !is_builtin(a))
        .map(|a| (false, a));
    let serve = command
        .find_subcommand(SERVE)
        .into_iter()
        .flat_map(|s| s.get_arguments())
        .filter(|a| a.get_long().is_some() && !a.is_global_set() && !is_builtin(a))
        .map(|a| (true, a));
    top.chain(serve).collect()
}

fn is_builtin(arg: &Arg) -> bool {
    matches!(arg.get_id().as_str(), "help" | "version")
}

/// The settings file at `path`, read and checked as [`Settings::load`] says.
fn load_from(command: &clap::Command, path: PathBuf) -> anyhow::Result<Settings> {
    // A regular file only (a FIFO is never waited on), at most MAX_FILE_BYTES.
    let text = match read_bounded_text(&path, MAX_FILE_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Settings {
                file: Some(path),
                settings: Vec::new(),
            });
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    let settings = parse(command, &text).with_context(|| format!("in {}", path.display()))?;
    Ok(Settings {
        file: Some(path),
        settings,
    })
}

/// A settings file is this long at most.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The settings `text` makes, each checked as its option would check it.
fn parse(command: &clap::Command, text: &str) -> anyhow::Result<Vec<Setting>> {
    let table = DeTable::parse(text).map_err(|mut e| {
        e.set_input(Some(text));
        anyhow::anyhow!("{e}")
    })?;
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let options = settable(command);
    let mut settings = Vec::new();
    let mut add = |serve: bool, key: &str, value: &DeValue, at: usize| -> anyhow::Result<()> {
        let line = line_of(at);
        let shown = if serve {
            format!("serve.{key}")
        } else {
            key.to_owned()
        };
        let Some((_, arg)) = options
            .iter()
            .find(|(s, a)| *s == serve && a.get_long() == Some(key))
        else {
            let known: Vec<&str> = options
                .iter()
                .filter(|(s, _)| *s == serve)
                .filter_map(|(_, a)| a.get_long())
                .collect();
            let hint = if key.contains('_') {
                format!(" (write it with dashes: {})", key.replace('_', "-"))
            } else {
                String::new()
            };
            bail!(
                "line {line}: unknown setting {shown}{hint}; {} {}",
                if serve {
                    "[serve] takes"
                } else {
                    "the top level takes"
                },
                known.join(", ")
            );
        };
        let value = plain(value)
            .with_context(|| format!("line {line}: {shown}: write a string, number or boolean"))?;
        let value = if is_path(arg) && value != "none" {
            expand_home(&value).with_context(|| format!("line {line}: {shown}"))?
        } else {
            value
        };
        // Checked as the flag would be: the command line parsed with it alone.
        let flag = format!("--{key}={value}");
        let argv: &[&str] = if serve {
            &["quarry", SERVE, &flag]
        } else {
            &["quarry", &flag, "config"]
        };
        if let Err(e) = command.clone().try_get_matches_from(argv) {
            let why = e.to_string();
            let why = why.lines().next().unwrap_or_default();
            bail!(
                "line {line}: {shown} = {value:?}: {}",
                why.trim_start_matches("error: ")
            );
        }
        settings.push(Setting {
            serve,
            id: arg.get_id().as_str().to_owned(),
            value,
            line,
        });
        Ok(())
    };
    // In the file's order, so that the first mistake is the one reported.
    let mut entries = Vec::new();
    for (key, value) in table.get_ref() {
        match value.get_ref() {
            DeValue::Table(serve) if key.get_ref() == SERVE => {
                entries.extend(serve.iter().map(|(k, v)| (true, k, v)));
            }
            _ => entries.push((false, key, value)),
        }
    }
    entries.sort_by_key(|(_, key, _)| key.span().start);
    for (serve, key, value) in entries {
        add(serve, key.get_ref(), value.get_ref(), key.span().start)?;
    }
    Ok(settings)
}

/// A scalar as the command line would spell it.
fn plain(value: &DeValue) -> Option<String> {
    match value {
        DeValue::String(s) => Some(s.to_string()),
        DeValue::Integer(i) => {
            let digits = i.as_str().replace('_', "");
            i64::from_str_radix(&digits, i.radix())
                .ok()
                .map(|n| n.to_string())
        }
        DeValue::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn is_path(arg: &Arg) -> bool {
    matches!(
        arg.get_value_hint(),
        ValueHint::AnyPath | ValueHint::DirPath | ValueHint::FilePath | ValueHint::ExecutablePath
    )
}

/// A path from the file: absolute, or `~/...` in the home folder. A relative one would depend
/// on the folder `quarry` is started in, and is refused.
fn expand_home(value: &str) -> anyhow::Result<String> {
    let path = if let Some(rest) = value.strip_prefix("~/") {
        dirs::home_dir()
            .context("no home folder to expand ~ in")?
            .join(rest)
    } else {
        PathBuf::from(value)
    };
    if !path.is_absolute() {
        bail!("{value:?} is relative: write an absolute path, or one starting with ~/");
    }
    path.into_os_string()
        .into_string()
        .map_err(|_| anyhow::anyhow!("not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parsed(text: &str) -> anyhow::Result<Vec<(bool, String, String, usize)>> {
        let command = crate::cli::Cli::command();
        Ok(parse(&command, text)?
            .into_iter()
            .map(|s| (s.serve, s.id, s.value, s.line))
            .collect())
    }

    #[test]
    fn settings_are_read_with_their_lines_and_home_expanded() {
        let home = dirs::home_dir().expect("home");
        let got = parsed(
            "# Quarry\nmodel-dir = \"none\"\ndata-dir = \"~/Search\"\n\n[serve]\nlisten = \"127.0.0.1:4848\"\nparallel-syncs = 1\nrate-limit = 1_000\n",
        )
        .expect("valid");
        assert_eq!(
            got,
            [
                (false, "model_dir".into(), "none".into(), 2),
                (
                    false,
                    "data_dir".into(),
                    home.join("Search").display().to_string(),
                    3
                ),
                (true, "listen".into(), "127.0.0.1:4848".into(), 6),
                (true, "parallel_syncs".into(), "1".into(), 7),
                (true, "rate_limit".into(), "1000".into(), 8),
            ]
        );
    }

    #[test]
    fn a_settings_file_that_is_a_fifo_or_too_large_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo.toml");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let big = dir.path().join("big.toml");
        std::fs::write(&big, "#".repeat((MAX_FILE_BYTES + 1) as usize)).expect("write");
        let command = crate::cli::Cli::command();
        for (file, said) in [(&fifo, "regular file"), (&big, "larger than")] {
            let err = load_from(&command, file.clone()).expect_err("refused");
            let shown = format!("{err:#}");
            assert!(shown.contains(said), "{shown}");
            assert!(shown.contains(&file.display().to_string()), "{shown}");
        }
    }

    #[test]
    fn a_bad_file_is_an_error_naming_the_line_and_the_fix() {
        let err = |text: &str| format!("{:#}", parsed(text).expect_err(text));
        let unknown =
            err("data-dir = \"/x\"\n[serve]\nlisten = \"127.0.0.1:1\"\nparallel_syncs = 2\n");
        assert!(unknown.contains("line 4"), "{unknown}");
        assert!(unknown.contains("parallel-syncs"), "{unknown}");
        let range = err("[serve]\nparallel-syncs = 40\n");
        assert!(range.contains("line 2: serve.parallel-syncs"), "{range}");
        assert!(range.contains("1..=16"), "{range}");
        let relative = err("data-dir = \"Search\"\n");
        assert!(relative.contains("line 1: data-dir"), "{relative}");
        assert!(relative.contains("~/"), "{relative}");
        let syntax = err("[serve\nlisten = 1\n");
        assert!(syntax.contains("line 1"), "{syntax}");
        let kind = err("listen = 1\n");
        assert!(kind.contains("unknown setting listen"), "{kind}");
        assert!(kind.contains("data-dir"), "{kind}");
        let table = err("[serve]\nlisten = [\"a\"]\n");
        assert!(table.contains("line 2: serve.listen"), "{table}");
    }
}
