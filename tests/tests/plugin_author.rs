//! A plugin author's path, as each template's README tells it: `quarry plugin new`, build,
//! `quarry plugin check` with a sample configuration, `quarry plugin install`, add a connector,
//! sync, search, and `quarry plugin remove`. Python and JavaScript build with the tools
//! `make setup` installs; Rust with `scripts/wasm-cargo.sh` (this machine has no rustup
//! wasm32-wasip2 target).

use std::path::{Path, PathBuf};
use std::process::Command;

use quarry_tests::quarry::Quarry;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(dir: &Path, program: &str, args: &[&str], env: &[(&str, String)]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} in {} failed:\n{}\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn home() -> PathBuf {
    PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
}

/// Builds a scaffold the way its README says, with this machine's tools.
fn build(lang: &str, dir: &Path, crate_name: &str) {
    match lang {
        "python" => {
            let tools = std::env::var("QUARRY_PY_TOOLS")
                .map(PathBuf::from)
                .unwrap_or_else(|_| home().join(".cache/quarry/tools/py"));
            let path = format!(
                "{}:{}",
                tools.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            );
            run(dir, "./build.sh", &[], &[("PATH", path)]);
        }
        "js" => {
            // The versions the template pins are those of plugins/js, installed by `make
            // setup`: lend them rather than download them again.
            std::os::unix::fs::symlink(
                repo().join("plugins/js/node_modules"),
                dir.join("node_modules"),
            )
            .expect("link node_modules");
            run(dir, "./build.sh", &[], &[]);
        }
        _ => {
            let target = std::env::var("WASM_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|_| home().join(".cache/quarry/wasm-target"));
            let script = repo().join("scripts/wasm-cargo.sh");
            let script = script.to_string_lossy();
            run(
                dir,
                &script,
                &[],
                &[("CARGO_TARGET_DIR", target.display().to_string())],
            );
            std::fs::copy(
                target.join(format!("wasm32-wasip2/release/{crate_name}.wasm")),
                dir.join(format!("{crate_name}.wasm")),
            )
            .expect("copy the component");
        }
    }
}

fn author(lang: &str, name: &str, id: &str, words: &str) {
    let q = Quarry::new();
    let work = q.scratch("work");
    std::fs::create_dir_all(&work).expect("work folder");
    let created = q.cli_ok(&[
        "plugin",
        "new",
        lang,
        name,
        "--dir",
        &work.to_string_lossy(),
    ]);
    let dir = work.join(id);
    assert!(created.contains(&dir.display().to_string()), "{created}");
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("README");
    assert!(readme.contains("quarry plugin check . --set"), "{readme}");
    build(lang, &dir, &id.replace('-', "_"));

    // The sample source: a folder of notes.
    let notes = q.scratch("notes");
    std::fs::create_dir_all(&notes).expect("notes");
    std::fs::write(notes.join("first.md"), format!("# First\n\n{words}\n")).expect("note");
    std::fs::write(notes.join("second.txt"), "other").expect("note");
    std::fs::write(notes.join("image.png"), [0u8, 1, 2]).expect("not a note");
    let setting = format!("folder={}", notes.display());

    let dir_arg = dir.to_string_lossy().into_owned();
    let check = q.cli_ok(&["plugin", "check", &dir_arg, "--set", &setting]);
    // Every language starts from the newest WIT, its SDK answering what the template leaves.
    let wit = "quarry:connector@0.5.0";
    let functions = "list-docs, list-changes, fetch-content, fetch-contents, read-file, read-scans, watch, validate-config";
    for expected in [wit, functions, "Listing    2 documents", words] {
        assert!(
            check.contains(expected),
            "check output lacks {expected:?}:\n{check}"
        );
    }
    let without = q.cli_ok(&["plugin", "check", &dir_arg]);
    assert!(
        without.contains("Dry run    skipped: give a sample configuration"),
        "{without}"
    );

    let installed = q.cli_ok(&["plugin", "install", &dir_arg, "--yes"]);
    assert!(installed.contains("Installed"), "{installed}");
    q.cli_ok(&[
        "connector",
        "add",
        "plugin",
        id,
        "--name",
        name,
        "--set",
        &setting,
    ]);
    q.cli_ok(&["connector", "sync", name, "--wait"]);
    let found = q.cli_json(&["search", words, "--json"]);
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["results"][0]["title"], Value::from("first.md"));

    // While Quarry serves, a new note is indexed from the watcher's hint alone: the plugin
    // answers `list-changes` for that path, without listing the folder again.
    let mut q = q;
    q.start();
    // The sync a start makes (for what changed while Quarry was stopped) ends first.
    let started = std::time::Instant::now();
    while !q.log().contains("sync finished") && started.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let key = q.integration("Reader", "all", &[]);
    std::fs::write(notes.join("third.md"), "# Third\n\ncormorant fishing\n").expect("note");
    quarry_tests::found::wait_until_found(
        &q,
        &key,
        ("cormorant", "title"),
        &["third.md"],
        std::time::Duration::from_secs(60),
    );
    // Its sync ends (and says so) a moment after the note is searchable.
    let found = std::time::Instant::now();
    while !q.log().contains("listed: 1, indexed: 1") && found.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let log = q.log();
    assert!(
        log.contains("listed: 1, indexed: 1"),
        "the new note came from its hint alone:\n{log}"
    );
    q.stop();

    let refused = q.cli(&["plugin", "remove", id]);
    assert!(
        !refused.ok && refused.stderr.contains("remove them first"),
        "{}",
        refused.stderr
    );
    q.cli_ok(&["connector", "remove", name]);
    q.cli_ok(&["plugin", "remove", id, "--yes"]);
    let list = q.cli_ok(&["plugin", "list"]);
    assert!(!list.contains(&format!("({id},")), "{list}");
}

#[test]
fn a_python_connector_from_the_template_to_search_results() {
    author("python", "Py Notes", "py-notes", "pelican migration");
}

#[test]
fn a_javascript_connector_from_the_template_to_search_results() {
    author("js", "Js Records", "js-records", "heron nesting");
}

#[test]
fn a_rust_connector_from_the_template_to_search_results() {
    author("rust", "Rust Notes", "rust-notes", "osprey diving");
}
