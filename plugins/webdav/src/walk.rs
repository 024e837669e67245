//! The walk of the folder tree: `PROPFIND` with `Depth: 1`, one folder at a time, depth first
//! with each folder's members in name order, so that a listing can stop after any folder and
//! go on later from the last folder it finished (what the checkpoint keeps). Hidden files and
//! folders (names starting with a dot) are left out, as the folder connector leaves them out.

use std::cmp::Ordering;
use std::time::Instant;

use quarry_sdk::Error;
use quarry_sdk::dav::{Client, Depth, Entry};

use crate::place::Place;

/// The properties asked for each member.
const PROPS: &str =
    "<d:resourcetype/><d:getetag/><d:getlastmodified/><d:getcontentlength/><d:getcontenttype/>";

/// Folders deeper than this are not walked (a server that answers an endless tree).
const MAX_DEPTH: usize = 64;

/// A folder to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    /// Its path inside the walked folder, decoded (empty for the walked folder itself).
    pub rel: String,
    /// Its `href` on the server.
    pub href: String,
}

/// A file found.
#[derive(Debug, Clone)]
pub struct Found {
    /// Its path inside the walked folder, decoded.
    pub rel: String,
    /// What the server said of it.
    pub entry: Entry,
}

/// What one folder holds: its files, and its folders.
pub struct Members {
    /// The files, in name order.
    pub files: Vec<Found>,
    /// The folders.
    pub folders: Vec<Folder>,
}

/// One page of a walk.
pub struct Page {
    /// The files of the folders listed, in walk order.
    pub files: Vec<Found>,
    /// The last folder listed whole, from which the next page goes on.
    pub last: Option<String>,
    /// Whether folders are left to list.
    pub more: bool,
}

/// What the last page left to list, for the next page of the same instance: it saves
/// listing again the folders on the way to where the walk stopped.
#[derive(Default)]
pub struct Resume {
    after: Option<String>,
    stack: Vec<Folder>,
}

/// Walks the folder of `place` with `dav`.
pub struct Walker<'a> {
    /// The client, with the user's credentials.
    pub dav: &'a Client,
    /// The walked folder.
    pub place: &'a Place,
}

impl Walker<'_> {
    /// Lists folders from where `after` (the last folder a page listed whole; none to start)
    /// left off, until `max_files` files are found or `until` passes.
    pub fn page(
        &self,
        after: Option<&str>,
        resume: &mut Resume,
        max_files: usize,
        until: Instant,
    ) -> Result<Page, Error> {
        let mut stack = match after {
            None => vec![self.root()],
            Some(after) if resume.after.as_deref() == Some(after) => {
                std::mem::take(&mut resume.stack)
            }
            Some(after) => self.rebuild(after)?,
        };
        let mut files = Vec::new();
        let mut last = None;
        while let Some(folder) = stack.pop() {
            let listed = match self.list(&folder) {
                Ok(listed) => listed,
                // What this page found before a folder that fails (a server error there) is
                // answered, so it is kept: the next page starts at that folder, and fails there
                // if it still fails.
                Err(_) if last.is_some() => {
                    stack.push(folder);
                    break;
                }
                Err(e) => return Err(e),
            };
            if let Some(mut members) = listed {
                files.append(&mut members.files);
                members.folders.sort_by(|a, b| order(&b.rel, &a.rel));
                stack.extend(members.folders);
            }
            last = Some(folder.rel);
            if files.len() >= max_files || Instant::now() >= until {
                break;
            }
        }
        let more = !stack.is_empty();
        *resume = Resume {
            after: last.clone().filter(|_| more),
            stack,
        };
        Ok(Page { files, last, more })
    }

    fn root(&self) -> Folder {
        Folder {
            rel: String::new(),
            href: self.place.root_href().to_owned(),
        }
    }

    /// The folders left to list after `after`, found again by listing the folders on the way
    /// to it (a new instance has no [`Resume`]).
    fn rebuild(&self, after: &str) -> Result<Vec<Folder>, Error> {
        let target = components(after);
        let mut stack = vec![self.root()];
        while let Some(folder) = stack.pop() {
            let at = components(&folder.rel);
            if target.starts_with(&at) {
                let Some(Members { mut folders, .. }) = self.list(&folder)? else {
                    continue;
                };
                folders.retain(|f| {
                    let sub = components(&f.rel);
                    target.starts_with(&sub) || sub > target
                });
                folders.sort_by(|a, b| order(&b.rel, &a.rel));
                stack.extend(folders);
            } else {
                // Past `after`: this folder and those below it in the stack are left to list.
                stack.push(folder);
                return Ok(stack);
            }
        }
        Ok(stack)
    }

    /// The files and folders in `folder`, or none when it is gone (deleted meanwhile). The
    /// walked folder itself gone is an error.
    pub fn list(&self, folder: &Folder) -> Result<Option<Members>, Error> {
        let url = self.place.url_of(&folder.href)?;
        let answer = match self.dav.propfind(&url, Depth::One, PROPS) {
            Ok(answer) => answer,
            Err(Error::NotFound(_)) if !folder.rel.is_empty() => return Ok(None),
            // A folder the user may not read (shared read-protected) is left out, as the folder
            // connector leaves out a folder it cannot read; the rest is listed.
            Err(Error::InvalidConfig(why)) if !folder.rel.is_empty() && why.contains("(403 ") => {
                quarry_sdk::log(
                    quarry_sdk::LogLevel::Warn,
                    &format!("{}: left out, the server forbids reading it", folder.rel),
                );
                return Ok(None);
            }
            Err(Error::NotFound(why)) => {
                return Err(Error::InvalidConfig(format!(
                    "`url`: the folder is not on the server ({why})"
                )));
            }
            Err(e) => return Err(e),
        };
        let depth = components(&folder.rel).len();
        let mut files = Vec::new();
        let mut folders = Vec::new();
        for entry in answer.entries {
            let Some(rel) = self.place.relative(&entry.href) else {
                continue;
            };
            // Only the folder's own members: not itself, nothing elsewhere.
            let (parent, name) = rel.rsplit_once('/').unwrap_or(("", &rel));
            if rel.is_empty() || parent != folder.rel || name.starts_with('.') {
                continue;
            }
            if entry.has_type("collection") {
                if depth < MAX_DEPTH {
                    let mut href = entry.href.clone();
                    if !href.ends_with('/') {
                        href.push('/');
                    }
                    folders.push(Folder { rel, href });
                }
            } else {
                files.push(Found { rel, entry });
            }
        }
        files.sort_by(|a, b| a.rel.cmp(&b.rel));
        Ok(Some(Members { files, folders }))
    }
}

/// The names of a relative path (none for the walked folder).
fn components(rel: &str) -> Vec<&str> {
    if rel.is_empty() {
        Vec::new()
    } else {
        rel.split('/').collect()
    }
}

/// The walk's order of two folders: depth first, names in order (a folder before what it
/// holds).
fn order(a: &str, b: &str) -> Ordering {
    components(a).cmp(&components(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_ordered_depth_first_by_name() {
        let mut folders = vec!["b", "a/c", "", "a", "a/b/z", "a/b", "ab"];
        folders.sort_by(|a, b| order(a, b));
        assert_eq!(folders, vec!["", "a", "a/b", "a/b/z", "a/c", "ab", "b"]);
    }
}
