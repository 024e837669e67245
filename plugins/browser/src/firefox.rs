//! Firefox's profile: `places.sqlite` (table `moz_places`: one row per address with its title,
//! visit count and last visit; `moz_historyvisits`: one row per visit; `moz_bookmarks`: the
//! bookmarks and their folders).

use std::collections::HashMap;

use quarry_sdk::Error;

use crate::history::{History, missing};
use crate::pages::Page;
use crate::profile::Profile;

/// The names people know Firefox's root folders by.
const ROOTS: [(&str, &str); 4] = [
    ("menu", "Bookmarks Menu"),
    ("toolbar", "Bookmarks Toolbar"),
    ("unfiled", "Other Bookmarks"),
    ("mobile", "Mobile Bookmarks"),
];

/// Bookmark folders deeper than this are not followed.
const MAX_DEPTH: usize = 64;

/// What the profile holds.
pub fn read(profile: &Profile) -> Result<History, Error> {
    let db = profile.history()?;
    let corrupt = |e: quarry_sqlite::Error| Error::Other(e.to_string());
    let places = db
        .table("moz_places")
        .map_err(|_| missing("moz_places table"))?;
    let mut history = History::default();
    let mut by_id = HashMap::new();
    for row in db.rows(&places).map_err(corrupt)? {
        let url = row.text(&places, "url");
        by_id.insert(row.rowid, url.clone());
        if !Page::is_indexed(&url) || row.integer(&places, "hidden") != 0 {
            continue;
        }
        let visits = row.integer(&places, "visit_count");
        let last = row.integer(&places, "last_visit_date") / 1000;
        if visits == 0 && last == 0 {
            continue; // known only as a bookmark: added below, with its folder
        }
        let page = history.page(&url);
        page.title = row.text(&places, "title");
        page.visits = visits;
        page.last_visit_ms = last;
    }
    if let Ok(visits) = db.table("moz_historyvisits") {
        for row in db.rows(&visits).map_err(corrupt)? {
            history.last_visit_id = history.last_visit_id.max(row.rowid);
            if let Some(url) = by_id.get(&row.integer(&visits, "place_id")) {
                history.visits.push((row.rowid, url.clone()));
            }
        }
    }
    if let Ok(bookmarks) = db.table("moz_bookmarks") {
        let rows = db.rows(&bookmarks).map_err(corrupt)?;
        // Folders: id -> (parent, title).
        let folders: HashMap<i64, (i64, String)> = rows
            .iter()
            .filter(|r| r.integer(&bookmarks, "type") == 2)
            .map(|r| {
                (
                    r.rowid,
                    (r.integer(&bookmarks, "parent"), r.text(&bookmarks, "title")),
                )
            })
            .collect();
        for row in rows.iter().filter(|r| r.integer(&bookmarks, "type") == 1) {
            let Some(url) = by_id.get(&row.integer(&bookmarks, "fk")) else {
                continue;
            };
            let folder = folder_path(&folders, row.integer(&bookmarks, "parent"));
            if folder == "tags" || folder.starts_with("tags/") {
                continue; // a tag of a bookmark, not a bookmark
            }
            let added = row.integer(&bookmarks, "dateAdded") / 1000;
            history.bookmark(url, &row.text(&bookmarks, "title"), &folder, added);
        }
    }
    history.seal_bookmarks();
    Ok(history)
}

/// The path of folder `id` from its root (`Bookmarks Toolbar/Recipes`).
fn folder_path(folders: &HashMap<i64, (i64, String)>, mut id: i64) -> String {
    let mut names = Vec::new();
    for _ in 0..MAX_DEPTH {
        let Some((parent, title)) = folders.get(&id) else {
            break;
        };
        if *parent == 0 || !folders.contains_key(parent) {
            break; // the root of roots, which has no name
        }
        let known = ROOTS
            .iter()
            .find(|(root, _)| root == title)
            .map(|(_, n)| *n);
        names.push(known.unwrap_or(title).to_owned());
        id = *parent;
    }
    names.reverse();
    names.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_named_from_their_root_as_people_know_them() {
        let folders: HashMap<i64, (i64, String)> = [
            (1, (0, String::new())),
            (2, (1, "menu".to_owned())),
            (3, (1, "toolbar".to_owned())),
            (4, (1, "tags".to_owned())),
            (7, (2, "Recipes".to_owned())),
            (8, (7, "Bread".to_owned())),
            (9, (4, "cooking".to_owned())),
        ]
        .into_iter()
        .collect();
        assert_eq!(folder_path(&folders, 8), "Bookmarks Menu/Recipes/Bread");
        assert_eq!(folder_path(&folders, 3), "Bookmarks Toolbar");
        assert_eq!(folder_path(&folders, 9), "tags/cooking");
        // A cycle ends.
        let cycle: HashMap<i64, (i64, String)> =
            [(5, (6, "a".to_owned())), (6, (5, "b".to_owned()))]
                .into_iter()
                .collect();
        assert!(folder_path(&cycle, 5).split('/').count() <= MAX_DEPTH);
    }
}
