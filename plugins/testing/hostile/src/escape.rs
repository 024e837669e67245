//! Attempts to read outside the granted folder.

use std::fs;

use quarry_sdk::Config;

/// Tries every way out it knows and reports, one line each, `DENIED <path>: <error>` or
/// `READ <path>: <bytes read>`.
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
    report
}
