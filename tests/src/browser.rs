//! The browser tests' runner: Debian's Chromium, driven by playwright-core from npm (`make setup`
//! installs both), runs a script of `tests/browser/` against the real server and prints one JSON
//! line; screenshots land in `target/screenshots/`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::quarry::Quarry;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository")
        .to_owned()
}

/// The browser tests' folder (`tests/browser`), its driver installed by `make setup`.
pub fn browser_dir() -> PathBuf {
    let dir = repo_root().join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed in {}: run `make setup`",
        dir.display()
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).is_file(),
        "{chromium} is missing: run `make setup` (Debian's chromium)"
    );
    dir
}

/// Where the browser tests put their screenshots.
pub fn shots_dir() -> PathBuf {
    repo_root().join("target/screenshots")
}

/// Runs `script` of tests/browser against `quarry` (its address, the admin token and the
/// screenshots folder are passed, with `env`); fails with the script's error and the server's
/// log unless it succeeds, and returns the JSON line it printed.
pub fn run_script(script: &str, quarry: &Quarry, env: &[(&str, &OsStr)]) -> serde_json::Value {
    let browser = browser_dir();
    let output = Command::new("node")
        .arg(browser.join(script))
        .current_dir(&browser)
        .env("QUARRY_URL", format!("http://{}", quarry.addr))
        .env("QUARRY_TOKEN", quarry.admin_token())
        .env("SHOTS_DIR", shots_dir())
        .envs(env.iter().copied())
        .output()
        .expect("node runs (make setup installs Node.js)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script} failed (screenshot in {}):\n{}\nserver log:\n{}",
        shots_dir().display(),
        String::from_utf8_lossy(&output.stderr),
        quarry.log()
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{script} printed no result ({e}): {stdout}"))
}

/// Fails unless each of `screens` (`{prefix}-{screen}.png`) was taken and is not blank.
pub fn assert_screenshots(prefix: &str, screens: &[&str]) {
    for screen in screens {
        let shot = shots_dir().join(format!("{prefix}-{screen}.png"));
        let size = std::fs::metadata(&shot).map_or(0, |m| m.len());
        assert!(size > 10_000, "{} is missing or blank", shot.display());
    }
}
