//! `quarry config`: the effective settings, and where each came from.

use std::path::Path;

use anyhow::Context;
use clap::{Arg, CommandFactory};
use quarry_embed::GraphChoice;
use serde_json::json;

use crate::cli::Cli;
use crate::config::{Origin, Parsed, settable};
use crate::setup::Paths;

/// One effective setting.
struct Shown {
    key: String,
    value: String,
    origin: String,
}

/// Prints every setting the file may make, with its value and origin.
pub fn run(paths: &Paths, parsed: &Parsed, json: bool) -> anyhow::Result<()> {
    // `quarry serve`'s options as a `serve` started now would read them: the file's values,
    // the environment, the defaults.
    let serve = parsed
        .command
        .clone()
        .try_get_matches_from(["quarry", "serve"])
        .context("reading the settings as `quarry serve` would")?;
    let serve = serve.subcommand_matches("serve");
    let mut shown = Vec::new();
    // In the order of the command line's definition (the file's values reorder `parsed`'s).
    let pristine = Cli::command();
    for (in_serve, arg) in settable(&pristine) {
        let matches = if in_serve {
            serve
        } else {
            Some(&parsed.matches)
        };
        let id = arg.get_id().as_str();
        let value = if in_serve {
            raw(serve, id)
        } else {
            top_level(paths, id).unwrap_or_else(|| raw(Some(&parsed.matches), id))
        };
        let mut origin = parsed.settings.origin(in_serve, arg, matches);
        if origin == Origin::Default
            && paths
                .bundle
                .as_ref()
                .is_some_and(|b| b.holds(Path::new(&value)))
        {
            origin = Origin::Bundled;
        }
        let long = arg.get_long().unwrap_or(id);
        shown.push(Shown {
            key: if in_serve {
                format!("serve.{long}")
            } else {
                long.to_owned()
            },
            value,
            origin: describe(origin, arg, parsed.settings.file()),
        });
    }
    let file = parsed.settings.file();
    let named = crate::config::path();
    if json {
        let settings: Vec<_> = shown
            .iter()
            .map(|s| json!({"key": s.key, "value": s.value, "origin": s.origin}))
            .collect();
        let answer = json!({
            "file": named.as_ref().map(|p| p.display().to_string()),
            "file_exists": file.is_some(),
            "settings": settings,
        });
        println!("{}", serde_json::to_string_pretty(&answer)?);
        return Ok(());
    }
    match (&named, file) {
        (_, Some(file)) => println!("Settings file: {}", file.display()),
        (Some(path), None) => println!(
            "Settings file: {} (none there; write one to change the defaults)",
            path.display()
        ),
        (None, None) => println!("Settings file: none (QUARRY_CONFIG=none)"),
    }
    let width = shown.iter().map(|s| s.key.len()).max().unwrap_or(0);
    let value_width = shown
        .iter()
        .map(|s| s.value.chars().count())
        .max()
        .unwrap_or(0)
        .min(60);
    for s in &shown {
        println!("{:width$}  {:value_width$}  {}", s.key, s.value, s.origin);
    }
    Ok(())
}

/// The effective value of a top-level option, as [`Paths`] resolved it (defaults and the
/// installation's files included).
fn top_level(paths: &Paths, id: &str) -> Option<String> {
    let shown = |p: &Path| p.display().to_string();
    Some(match id {
        "data_dir" => shown(&paths.data_dir),
        "keys_dir" => shown(&paths.keys_dir),
        "database" => paths.database.as_deref().map_or_else(
            || format!("the data folder's {}", quarry_store::DB_FILE),
            quarry_store::shown_address,
        ),
        "host_name" => paths.host_name.clone(),
        "component_cache" => shown(&paths.component_cache),
        "plugins_dir" => paths
            .plugin_dirs
            .iter()
            .find(|d| **d != paths.installed_plugins())
            .map_or_else(|| "none".to_owned(), |d| shown(d)),
        "model_dir" => paths
            .model
            .as_ref()
            .map_or_else(|| "none".to_owned(), |m| shown(&m.model_dir)),
        "ort_lib" => paths.model.as_ref().map_or_else(
            || "none (no model)".to_owned(),
            |m| shown(&m.runtime_library),
        ),
        "embed_threads" => paths
            .model
            .as_ref()
            .map_or_else(|| "none (no model)".to_owned(), |m| m.threads.to_string()),
        "embed_graph" => paths.model.as_ref().map_or_else(
            || "none (no model)".to_owned(),
            |m| {
                let cpu = quarry_embed::graph::Cpu::this();
                match quarry_embed::graph::chosen(&m.model_dir, m.graph, cpu) {
                    Ok((graph, _)) if m.graph == GraphChoice::Auto => {
                        format!("auto ({graph} on this CPU)")
                    }
                    Ok((graph, _)) => graph.to_string(),
                    Err(e) => format!("{} ({e})", m.graph),
                }
            },
        ),
        _ => return None,
    })
}

/// An option's value as parsed, or "none".
fn raw(matches: Option<&clap::ArgMatches>, id: &str) -> String {
    matches
        .and_then(|m| m.get_raw(id))
        .map(|values| {
            values
                .map(|v| v.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_else(|| "none".to_owned())
}

fn describe(origin: Origin, arg: &Arg, file: Option<&Path>) -> String {
    match origin {
        Origin::Default => "default".to_owned(),
        Origin::Bundled => "installed with Quarry".to_owned(),
        Origin::File(line) => format!(
            "{} line {line}",
            file.and_then(Path::file_name)
                .map_or_else(|| "config.toml".into(), |n| n.to_string_lossy())
        ),
        Origin::Environment => format!(
            "environment {}",
            arg.get_env()
                .map(|v| v.to_string_lossy())
                .unwrap_or_default()
        ),
        Origin::Flag => format!("flag --{}", arg.get_long().unwrap_or_default()),
    }
}
