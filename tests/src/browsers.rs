//! Real browser profiles for the browser connector's tests: Debian's Chromium (driven by
//! playwright-core, closed as a person closes it, so it writes its history) and Firefox ESR
//! (headless; its bookmarks imported from a `bookmarks.html` at its first start, as Firefox
//! does), each visiting pages a loopback server serves. A Firefox can be left running, its
//! `places.sqlite` open and in WAL mode, while the connector reads it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::browser::browser_dir;

/// A Chromium profile folder (`Default` of a user data folder) that visited `urls`, with
/// `bookmarks` (folder, title, address) on its bookmark bar, saved before it started (none:
/// the bookmarks it has are kept).
pub fn chromium_profile(
    data_dir: &Path,
    urls: &[String],
    bookmarks: &[(&str, &str, &str)],
) -> PathBuf {
    let profile = data_dir.join("Default");
    std::fs::create_dir_all(&profile).expect("mkdir");
    let mut folders: Vec<(&str, Vec<serde_json::Value>)> = Vec::new();
    for (n, (folder, title, url)) in bookmarks.iter().enumerate() {
        let node = serde_json::json!({
            "date_added": "13380000000000000", "id": (100 + n).to_string(), "name": title,
            "type": "url", "url": url
        });
        match folders.iter_mut().find(|(f, _)| f == folder) {
            Some((_, nodes)) => nodes.push(node),
            None => folders.push((folder, vec![node])),
        }
    }
    let children: Vec<serde_json::Value> = folders
        .into_iter()
        .enumerate()
        .map(|(n, (folder, nodes))| {
            serde_json::json!({"children": nodes, "date_added": "13380000000000000",
                "id": (10 + n).to_string(), "name": folder, "type": "folder"})
        })
        .collect();
    let file = serde_json::json!({"roots": {
        "bookmark_bar": {"children": children, "date_added": "13380000000000000", "id": "1",
            "name": "Bookmarks bar", "type": "folder"},
        "other": {"children": [], "id": "2", "name": "Other bookmarks", "type": "folder"},
        "synced": {"children": [], "id": "3", "name": "Mobile bookmarks", "type": "folder"}},
        "version": 1});
    if !bookmarks.is_empty() || !profile.join("Bookmarks").exists() {
        std::fs::write(profile.join("Bookmarks"), file.to_string()).expect("write Bookmarks");
    }
    let output = Command::new("node")
        .arg(browser_dir().join("browse-profile.mjs"))
        .current_dir(browser_dir())
        .env("VISIT", serde_json::to_string(urls).expect("JSON"))
        .env("PROFILE_DIR", data_dir)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "Chromium did not browse: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    profile
}

/// A running Firefox ESR, headless, on its own profile.
pub struct Firefox {
    /// The profile folder.
    pub profile: PathBuf,
    process: Option<Child>,
}

impl Firefox {
    /// Starts Firefox on a new profile in `dir` that imports `bookmarks` (folder, title,
    /// address, in the Bookmarks Menu) at its first start and opens `url`; returns once Firefox
    /// has recorded the visit (its `places.sqlite` open, in WAL mode).
    pub fn start(dir: &Path, url: &str, bookmarks: &[(&str, &str, &str)]) -> Firefox {
        let profile = dir.join("firefox-profile");
        std::fs::create_dir_all(&profile).expect("mkdir");
        std::fs::write(
            profile.join("user.js"),
            "user_pref(\"browser.shell.checkDefaultBrowser\", false);\n\
             user_pref(\"datareporting.policy.dataSubmissionEnabled\", false);\n\
             user_pref(\"toolkit.telemetry.reportingpolicy.firstRun\", false);\n\
             user_pref(\"browser.places.importBookmarksHTML\", true);\n\
             user_pref(\"app.update.enabled\", false);\n",
        )
        .expect("write user.js");
        let mut html = String::from(
            "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=UTF-8\">\n<TITLE>Bookmarks</TITLE>\n<H1>Bookmarks Menu</H1>\n<DL><p>\n",
        );
        for (folder, title, address) in bookmarks {
            html.push_str(&format!(
                "<DT><H3>{folder}</H3>\n<DL><p>\n<DT><A HREF=\"{address}\">{title}</A>\n</DL><p>\n"
            ));
        }
        html.push_str("</DL><p>\n");
        std::fs::write(profile.join("bookmarks.html"), html).expect("write bookmarks.html");
        let process = Command::new("firefox-esr")
            .args(["--headless", "--no-remote", "--profile"])
            .arg(&profile)
            .arg(url)
            .env("HOME", dir)
            .env("MOZ_CRASHREPORTER_DISABLE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("firefox-esr runs (`make setup` installs it)");
        let firefox = Firefox {
            profile,
            process: Some(process),
        };
        let until = Instant::now() + Duration::from_secs(60);
        while !firefox.has_logged_a_visit() {
            assert!(
                Instant::now() < until,
                "Firefox recorded no visit within 60 s"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        firefox
    }

    /// Whether `places.sqlite`'s log holds a visit yet (its WAL grows past the bookmarks').
    fn has_logged_a_visit(&self) -> bool {
        let wal = self.profile.join("places.sqlite-wal");
        let copy = self.profile.with_extension("check");
        let _ = std::fs::remove_dir_all(&copy);
        std::fs::create_dir_all(&copy).expect("mkdir");
        for name in ["places.sqlite", "places.sqlite-wal"] {
            if std::fs::copy(self.profile.join(name), copy.join(name)).is_err() {
                return false;
            }
        }
        let counted = Command::new("python3")
            .arg("-c")
            .arg("import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(d.execute('select count(*) from moz_historyvisits').fetchone()[0])")
            .arg(copy.join("places.sqlite"))
            .output();
        let _ = std::fs::remove_dir_all(&copy);
        wal.exists()
            && counted.is_ok_and(|out| {
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse::<u32>()
                    .is_ok_and(|n| n > 0)
            })
    }
}

impl Drop for Firefox {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &process.id().to_string()])
                .status();
            let _ = process.wait();
        }
    }
}
