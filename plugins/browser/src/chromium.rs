//! Chromium's profile (Chrome, Edge, Brave, Vivaldi): `History` (table `urls`: one row per
//! address with its title, visit count and last visit; `visits`: one row per visit) and
//! `Bookmarks` (JSON: the bookmark bar, other and mobile bookmarks, folders inside).

use quarry_sdk::Error;
use serde_json::Value;

use crate::history::{History, missing};
use crate::pages::Page;
use crate::profile::Profile;

/// Microseconds from 1601-01-01 (Windows' epoch, Chromium's times) to 1970-01-01.
const EPOCH_1601_US: i64 = 11_644_473_600_000_000;

fn ms_of(chromium_us: i64) -> i64 {
    if chromium_us <= 0 {
        0
    } else {
        (chromium_us - EPOCH_1601_US) / 1000
    }
}

/// What the profile holds.
pub fn read(profile: &Profile) -> Result<History, Error> {
    let db = profile.history()?;
    let urls = db.table("urls").map_err(|_| missing("urls table"))?;
    let mut history = History::default();
    let mut by_id = std::collections::HashMap::new();
    for row in db.rows(&urls).map_err(|e| Error::Other(e.to_string()))? {
        let url = row.text(&urls, "url");
        by_id.insert(row.rowid, url.clone());
        if !Page::is_indexed(&url) || row.integer(&urls, "hidden") != 0 {
            continue;
        }
        let page = history.page(&url);
        page.title = row.text(&urls, "title");
        page.visits = row.integer(&urls, "visit_count");
        page.last_visit_ms = ms_of(row.integer(&urls, "last_visit_time"));
    }
    if let Ok(visits) = db.table("visits") {
        for row in db.rows(&visits).map_err(|e| Error::Other(e.to_string()))? {
            history.last_visit_id = history.last_visit_id.max(row.rowid);
            if let Some(url) = by_id.get(&row.integer(&visits, "url")) {
                history.visits.push((row.rowid, url.clone()));
            }
        }
    }
    if let Some(json) = profile.bookmarks_json()? {
        let root: Value = serde_json::from_slice(&json)
            .map_err(|e| Error::Other(format!("the Bookmarks file is not JSON: {e}")))?;
        if let Some(roots) = root.get("roots").and_then(Value::as_object) {
            for node in roots.values() {
                walk(&mut history, node, "", 0);
            }
        }
    }
    history.seal_bookmarks();
    Ok(history)
}

/// Bookmark folders deeper than this are not walked.
const MAX_DEPTH: usize = 64;

/// Notes the bookmarks of `node` (a folder or a bookmark) under folder path `folder`.
fn walk(history: &mut History, node: &Value, folder: &str, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let name = node.get("name").and_then(Value::as_str).unwrap_or_default();
    match node.get("type").and_then(Value::as_str) {
        Some("url") => {
            let url = node.get("url").and_then(Value::as_str).unwrap_or_default();
            let added = node
                .get("date_added")
                .and_then(Value::as_str)
                .and_then(|t| t.parse::<i64>().ok())
                .map_or(0, ms_of);
            history.bookmark(url, name, folder, added);
        }
        Some("folder") => {
            let path = if folder.is_empty() {
                name.to_owned()
            } else {
                format!("{folder}/{name}")
            };
            for child in node
                .get("children")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                walk(history, child, &path, depth + 1);
            }
        }
        _ => {}
    }
}
