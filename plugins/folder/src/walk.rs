//! A deterministic, resumable walk of the granted folder.
//!
//! Entries are visited depth-first with the names of each directory sorted, which is the order of
//! relative paths compared component by component. A listing can therefore resume after any path
//! it returned: subtrees that sort before it are skipped without being read.

use std::cmp::Ordering;
use std::io;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use quarry_sdk::fs::{Dir, Entry, Kind, Stat};

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
    pub stat: Stat,
}

/// The result of one bounded walk.
pub struct Page {
    /// Files in walk order.
    pub files: Vec<FileEntry>,
    /// True when the walk stopped at the limit; resume after the last file.
    pub more: bool,
}

/// The sorted listings of the folders a walk stopped in, kept for the walk that resumes right
/// there (the next page of the same listing), so that a folder of many entries is read once per
/// listing, not once per page. Any other walk reads the folders afresh.
#[derive(Default)]
pub struct Resume {
    /// The path the walk stopped at (its last file), relative to the root.
    after: String,
    /// The folders on the way to it (sandbox paths), each with its entries, sorted.
    folders: Vec<(PathBuf, Vec<Entry>)>,
}

/// Walks the folder at sandbox path `root`, returning up to `limit` files that come after
/// `after` (a relative path returned earlier) in walk order. `resume` carries folder listings
/// from one page to the next.
pub fn walk(
    root: &Path,
    filters: &Filters,
    after: Option<&str>,
    limit: usize,
    resume: &mut Resume,
) -> io::Result<Page> {
    let kept = std::mem::take(resume);
    let listed = match after {
        Some(after) if after == kept.after => kept.folders,
        _ => Vec::new(),
    };
    let dir = Dir::open(&root.to_string_lossy())?;
    let mut walker = Walker {
        filters,
        after: after.map(|a| a.split('/').collect()),
        limit,
        files: Vec::new(),
        ignores: vec![root_rules(root, &filters.exclude)],
        listed,
        stopped_in: Vec::new(),
    };
    let more = walker.visit(&dir, root, &mut Vec::new())?;
    if let (true, Some(last)) = (more, walker.files.last()) {
        *resume = Resume {
            after: last.rel.clone(),
            folders: walker.stopped_in,
        };
    }
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
    /// Listings kept by the page before, of the folders on the way to `after`.
    listed: Vec<(PathBuf, Vec<Entry>)>,
    /// Listings of the folders this walk stopped in, innermost first.
    stopped_in: Vec<(PathBuf, Vec<Entry>)>,
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
    /// Visits the open directory `dir`, at sandbox path `path`; returns true when the limit was
    /// reached.
    fn visit(&mut self, dir: &Dir, path: &Path, rel: &mut Vec<String>) -> io::Result<bool> {
        let mut entries = match self.listed.iter().position(|(p, _)| p == path) {
            Some(i) => self.listed.swap_remove(i).1,
            None => {
                let mut entries = dir.entries()?;
                entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
                entries
            }
        };
        // Ignore files are found among the names just read: no extra look-ups per directory.
        let pushed_rules = match dir_rules(path, &entries) {
            Some(rules) => {
                self.ignores.push(rules);
                true
            }
            None => false,
        };

        // In a folder on the way to the resume point, the names before its next component
        // were listed by earlier pages: start at that component, found by its sorted place.
        let start = match (self.position(rel), &self.after) {
            (Position::Ancestor, Some(after)) => after.get(rel.len()).map_or(0, |next| {
                entries.partition_point(|entry| entry.name.as_str() < *next)
            }),
            _ => 0,
        };
        let mut reached_limit = false;
        for entry in entries.get_mut(start..).unwrap_or_default() {
            if !self.filters.include_hidden && entry.name.starts_with('.') {
                continue;
            }
            // The name is lent to the path and given back: the listing stays whole for the
            // next page, without a copy of each name.
            rel.push(std::mem::take(&mut entry.name));
            let flow = self.visit_entry(dir, path, (entry.kind, entry.stat), rel);
            entry.name = rel.pop().unwrap_or_default();
            if flow? {
                reached_limit = true;
                break;
            }
        }
        if pushed_rules {
            self.ignores.pop();
        }
        if reached_limit {
            self.stopped_in.push((path.to_path_buf(), entries));
        }
        Ok(reached_limit)
    }

    /// Visits the entry of `dir` (at sandbox path `dir_path`) named by the last component of
    /// `rel`, of `kind` (and, for a file, with its metadata if the listing told it); true when
    /// the limit was reached.
    fn visit_entry(
        &mut self,
        dir: &Dir,
        dir_path: &Path,
        (kind, listed): (Kind, Option<Stat>),
        rel: &mut Vec<String>,
    ) -> io::Result<bool> {
        let position = self.position(rel);
        if matches!(position, Position::Before) {
            return Ok(false);
        }
        let name = rel.last().map(String::as_str).unwrap_or_default();
        let path = dir_path.join(name);
        if kind == Kind::Dir {
            if self.ignored(&path, true) {
                return Ok(false);
            }
            let visited = dir
                .open_dir(name)
                .and_then(|sub| self.visit(&sub, &path, rel));
            return match visited {
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
        let stat = match kind {
            // The sandbox refuses links that lead outside the granted folder; links to
            // directories are not followed (they could form cycles or list things twice).
            Kind::Symlink => match dir.stat_follow(name) {
                Ok(stat) if stat.kind == Kind::File => stat,
                Ok(_) => return Ok(false),
                Err(e) => {
                    skip(&path, &format!("symlink not followed: {e}"));
                    return Ok(false);
                }
            },
            // As listed, or one stat relative to the open directory.
            Kind::File => match listed.map_or_else(|| dir.stat(name), Ok) {
                Ok(stat) => stat,
                Err(e) => {
                    skip(&path, &e.to_string());
                    return Ok(false);
                }
            },
            // Sockets, pipes and devices: reading them could block or never end.
            Kind::Dir | Kind::Other => return Ok(false),
        };
        self.files.push(FileEntry {
            rel: rel.join("/"),
            stat,
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

    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        ignored_by(&self.ignores, path, is_dir)
    }
}

/// Applies ignore rules (outermost directory's first), innermost first: the first rule that
/// matches decides.
fn ignored_by(ignores: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    for rules in ignores.iter().rev() {
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

/// Whether the walk leaves out the entry at `rel` (its path's components below `root`), a
/// file or (with `is_dir`) a folder: hidden, or ignored by the configured patterns or by an
/// ignore file of a folder above it. Reads only the ignore files on the way to it.
pub fn excluded(root: &Path, filters: &Filters, rel: &[&str], is_dir: bool) -> bool {
    if !filters.include_hidden && rel.iter().any(|c| c.starts_with('.')) {
        return true;
    }
    let mut ignores = vec![root_rules(root, &filters.exclude)];
    let mut dir = root.to_path_buf();
    for (i, name) in rel.iter().enumerate() {
        let present: Vec<&str> = IGNORE_FILES
            .into_iter()
            .filter(|n| dir.join(n).is_file())
            .collect();
        if let Some(rules) = rules_of(&dir, &present) {
            ignores.push(rules);
        }
        let path = dir.join(name);
        if ignored_by(&ignores, &path, is_dir || i + 1 < rel.len()) {
            return true;
        }
        dir = path;
    }
    false
}

/// Whether `name` is one of the files whose lines say what to leave out.
pub fn is_ignore_file(name: &str) -> bool {
    IGNORE_FILES.contains(&name)
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

/// The rules of the ignore files among `entries`, the contents of `dir`, if it has any.
fn dir_rules(dir: &Path, entries: &[Entry]) -> Option<Gitignore> {
    let present = |name: &str| {
        entries
            .iter()
            .any(|e| e.name == name && e.kind == Kind::File)
    };
    let names: Vec<&str> = IGNORE_FILES.into_iter().filter(|n| present(n)).collect();
    rules_of(dir, &names)
}

/// The rules of the ignore files `names` (in the order of [`IGNORE_FILES`]) of `dir`; `None`
/// when there are none.
fn rules_of(dir: &Path, names: &[&str]) -> Option<Gitignore> {
    if names.is_empty() {
        return None;
    }
    let mut builder = GitignoreBuilder::new(dir);
    // In the order of IGNORE_FILES, so later files' rules take precedence.
    for name in names {
        let file: PathBuf = dir.join(name);
        if let Some(e) = builder.add(&file) {
            skip(&file, &format!("some lines ignored: {e}"));
        }
    }
    builder.build().ok()
}

fn skip(path: &Path, why: &str) {
    quarry_sdk::log(
        quarry_sdk::LogLevel::Debug,
        &format!("skipping {}: {why}", path.display()),
    );
}
