//! Attempts to read outside the granted folder.

use std::fs;

use quarry_sdk::Config;
use quarry_sdk::bindings::quarry::connector::host;

/// Tries every way out it knows and reports, one line each, `DENIED <path>: <error>` or
/// `READ <path>: <bytes read>`; then the same through the host's bulk reads (`read-file-start`,
/// `read-folder`), as `BULK DENIED ...` or `BULK READ ...`.
pub fn attempts(config: &Config) -> String {
    let root = config.get("folder").unwrap_or("/folder");
    let targets = [
        format!("{root}/../secret.txt"),
        format!("{root}/../../etc/passwd"),
        "/etc/passwd".to_owned(),
        "../secret.txt".to_owned(),
        format!("{root}/link-out/secret.txt"),
        format!("{root}/link-file"),
        format!("{root}/inside.txt"),
    ];
    let mut report = String::new();
    for target in &targets {
        match fs::read(target) {
            Ok(bytes) => report.push_str(&format!(
                "READ {target}: {}\n",
                String::from_utf8_lossy(&bytes)
            )),
            Err(e) => report.push_str(&format!("DENIED {target}: {e}\n")),
        }
    }
    for dir in ["/", ".."] {
        match fs::read_dir(dir) {
            Ok(entries) => report.push_str(&format!("READ {dir}: {} entries\n", entries.count())),
            Err(e) => report.push_str(&format!("DENIED {dir}: {e}\n")),
        }
    }
    for target in &targets {
        report.push_str(&bulk_read(target, target));
    }
    for dir in [
        "/",
        "..",
        &format!("{root}/.."),
        &format!("{root}/link-out"),
    ] {
        report.push_str(&bulk_list(dir, dir));
    }
    report
}

/// `BULK READ <name>: <text>` or `BULK DENIED <name>: <error>` for the start of the file at
/// `path`, read through the host's `read-file-start`.
fn bulk_read(name: &str, path: &str) -> String {
    match host::read_file_start(path, 4096) {
        Ok((bytes, size)) => format!(
            "BULK READ {name}: {} ({size} bytes)\n",
            String::from_utf8_lossy(&bytes)
        ),
        Err(e) => format!("BULK DENIED {name}: {}\n", e.name()),
    }
}

/// `BULK READ <name>: <n> entries` or `BULK DENIED <name>: <error>` for the folder at `path`,
/// listed through the host's `read-folder`.
fn bulk_list(name: &str, path: &str) -> String {
    match host::read_folder(path) {
        Ok(entries) => format!("BULK READ {name}: {} entries\n", entries.len()),
        Err(e) => format!("BULK DENIED {name}: {}\n", e.name()),
    }
}

/// Reads every entry of the folder (files whole, folders by listing them), without looking at
/// what each is first, and reports one line each: `READ <name>: <bytes or entries>` or
/// `DENIED <name>: <error>`, then the same through the host's bulk reads (`BULK READ ...`,
/// `BULK DENIED ...`). With `probe` (a relative path), first stats and reads that path.
pub fn read_all(config: &Config) -> String {
    let root = config.get("folder").unwrap_or("/folder");
    let mut names: Vec<String> = match fs::read_dir(root) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) => return format!("DENIED {root}: {e}\n"),
    };
    names.sort();
    let mut report = String::new();
    // A path through other folders, as a guess of what lies inside one it cannot list.
    if let Some(probe) = config.get("probe") {
        let path = format!("{root}/{probe}");
        match fs::metadata(&path) {
            Ok(meta) => report.push_str(&format!("STAT {probe}: {} bytes\n", meta.len())),
            Err(e) => report.push_str(&format!("DENIED stat {probe}: {e}\n")),
        }
        match fs::read(&path) {
            Ok(bytes) => report.push_str(&format!("READ {probe}: {} bytes\n", bytes.len())),
            Err(e) => report.push_str(&format!("DENIED {probe}: {e}\n")),
        }
        report.push_str(&bulk_read(probe, &path));
    }
    for name in names {
        let path = format!("{root}/{name}");
        // A folder does not read as a file: then it is listed.
        let outcome = match fs::read(&path) {
            Ok(bytes) => format!("READ {name}: {} bytes", bytes.len()),
            Err(e) => match fs::read_dir(&path) {
                Ok(entries) => format!("READ {name}: {} entries", entries.count()),
                Err(_) => format!("DENIED {name}: {e}"),
            },
        };
        report.push_str(&outcome);
        report.push('\n');
        let bulk = match host::read_file_start(&path, 4096) {
            Err(quarry_sdk::bindings::quarry::connector::types::ReadError::WrongKind) => {
                bulk_list(&name, &path)
            }
            _ => bulk_read(&name, &path),
        };
        report.push_str(&bulk);
    }
    report
}
