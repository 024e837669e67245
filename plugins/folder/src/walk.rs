//! A deterministic, resumable walk of the granted folder.
//!
//! Entries are visited depth-first with the names of each directory sorted, which is the order of
//! relative paths compared component by component. A listing can therefore resume after any path
//! it returned: subtrees that sort before it are skipped without being read.

use std::cmp::Ordering;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Names of files whose lines say what to leave out, as in `.gitignore`.
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".quarryignore"];

/// What the walk leaves out.
pub struct Filters {
    /// Patterns (gitignore syntax) applied from the folder's root, e.g. `node_modules/`.
    pub exclude: Vec<String>,
    /// Whether names starting with a dot are listed.
    pub include_hidden: bool,
}

/// A regular file found by the walk.
pub struct FileEntry {
    /// Path relative to the root, components joined by `/`.
    pub rel: String,
    /// Metadata of the file (of the target, for a symlink inside the root).
    pub meta: fs::Metadata,
}

/// The result of one bounded walk.
pub struct Page {
    /// Files in walk order.
    pub files: Vec<FileEntry>,
    /// True when the walk stopped at the limit; resume after the last file.
    pub more: bool,
}

/// Walks `root`, returning up to `limit` files that come after `after` (a relative path returned
/// earlier) in walk order.
pub fn walk(root: &Path, filters: &Filters, after: Option<&str>, limit: usize) -> io::Result<Page> {
    let after: Option<Vec<&str>> = after.map(|a| a.split('/').collect());
    let mut walker = Walker {
        filters,
        after,
        limit,
        files: Vec::new(),
        ignores: vec![root_rules(root, &filters.exclude)],
    };
    let more = walker.visit(root, &mut Vec::new())?;
    Ok(Page {
        files: walker.files,
        more,
    })
}

struct Walker<'a> {
    filters: &'a Filters,
    after: Option<Vec<&'a str>>,
    limit: usize,
    files: Vec<FileEntry>,
    /// Ignore rules of the directories on the current path, outermost first.
    ignores: Vec<Gitignore>,
}

/// Where a path stands relative to the resume point.
enum Position {
    /// Sorts before the resume point and is not one of its ancestors: skip it whole.
    Before,
    /// An ancestor directory of the resume point: descend, skipping what comes before.
    Ancestor,
    /// Sorts after the resume point (or there is none): take it.
    After,
}

impl Walker<'_> {
    /// Visits one directory; returns true when the limit was reached.
    fn visit(&mut self, dir: &Path, rel: &mut Vec<String>) -> io::Result<bool> {
        let pushed_rules = match dir_rules(dir) {
            Some(rules) => {
                self.ignores.push(rules);
                true
            }
            None => false,
        };
        let mut names: Vec<String> = Vec::new();
        for entry in fs::read_dir(dir)? {
            match entry {
                Ok(entry) => match entry.file_name().into_string() {
                    Ok(name) => names.push(name),
                    Err(_) => skip(dir, "its name is not valid UTF-8"),
                },
                Err(e) => skip(dir, &format!("an entry could not be read: {e}")),
            }
        }
        names.sort_unstable();

        let mut reached_limit = false;
        for name in names {
            if !self.filters.include_hidden && name.starts_with('.') {
                continue;
            }
            rel.push(name);
            let flow = self.visit_entry(dir, rel);
            rel.pop();
            if flow? {
                reached_limit = true;
                break;
            }
        }
        if pushed_rules {
            self.ignores.pop();
        }
        Ok(reached_limit)
    }

    /// Visits the entry `rel` (its last component) inside `dir`; true when the limit was reached.
    fn visit_entry(&mut self, dir: &Path, rel: &[String]) -> io::Result<bool> {
        let position = self.position(rel);
        if matches!(position, Position::Before) {
            return Ok(false);
        }
        let name = rel.last().map(String::as_str).unwrap_or_default();
        let path = dir.join(name);
        let link = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) => {
                skip(&path, &e.to_string());
                return Ok(false);
            }
        };
        let is_link = link.file_type().is_symlink();
        if link.is_dir() {
            if self.ignored(&path, true) {
                return Ok(false);
            }
            return match self.visit(&path, &mut rel.to_vec()) {
                Ok(reached) => Ok(reached),
                Err(e) => {
                    skip(&path, &e.to_string());
                    Ok(false)
                }
            };
        }
        if matches!(position, Position::Ancestor) || self.ignored(&path, false) {
            return Ok(false);
        }
        let meta = if is_link {
            // The sandbox refuses links that lead outside the granted folder; links to
            // directories are not followed (they could form cycles or list things twice).
            match fs::metadata(&path) {
                Ok(meta) if meta.is_file() => meta,
                Ok(_) => return Ok(false),
                Err(e) => {
                    skip(&path, &format!("symlink not followed: {e}"));
                    return Ok(false);
                }
            }
        } else if link.is_file() {
            link
        } else {
            // Sockets, pipes and devices: reading them could block or never end.
            return Ok(false);
        };
        self.files.push(FileEntry {
            rel: rel.join("/"),
            meta,
        });
        Ok(self.files.len() >= self.limit)
    }

    fn position(&self, rel: &[String]) -> Position {
        let Some(after) = &self.after else {
            return Position::After;
        };
        for (i, component) in rel.iter().enumerate() {
            match after.get(i) {
                None => return Position::After,
                Some(a) => match component.as_str().cmp(a) {
                    Ordering::Less => return Position::Before,
                    Ordering::Greater => return Position::After,
                    Ordering::Equal => {}
                },
            }
        }
        if rel.len() < after.len() {
            Position::Ancestor
        } else {
            // The resume point itself was already listed.
            Position::Before
        }
    }

    /// Applies the ignore rules, innermost directory first: the first rule that matches decides.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        for rules in self.ignores.iter().rev() {
            let m = rules.matched(path, is_dir);
            if m.is_ignore() {
                return true;
            }
            if m.is_whitelist() {
                return false;
            }
        }
        false
    }
}

/// The configured exclusions, as rules anchored at the root.
fn root_rules(root: &Path, exclude: &[String]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(root);
    for pattern in exclude {
        if let Err(e) = builder.add_line(None, pattern) {
            skip(Path::new(pattern), &format!("exclude pattern ignored: {e}"));
        }
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The rules of the ignore files in `dir`, if it has any.
fn dir_rules(dir: &Path) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    let mut found = false;
    for name in IGNORE_FILES {
        let file: PathBuf = dir.join(name);
        if file.is_file() {
            found = true;
            if let Some(e) = builder.add(&file) {
                skip(&file, &format!("some lines ignored: {e}"));
            }
        }
    }
    if !found {
        return None;
    }
    builder.build().ok()
}

fn skip(path: &Path, why: &str) {
    quarry_sdk::log(
        quarry_sdk::LogLevel::Debug,
        &format!("skipping {}: {why}", path.display()),
    );
}
