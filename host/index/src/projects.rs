//! Software projects among the index's documents: a folder holding a build manifest
//! (`Cargo.toml`, `package.json`, `pyproject.toml`...), with everything under it. The prose in
//! them (READMEs, changelogs, the documentation of code a person downloaded or builds: a home
//! folder's source trees hold thousands) is less often what a person asks for by meaning than
//! their own notes and documents, so the embedding queue takes it after the prose outside
//! projects (`pending.rs`).
//!
//! Projects are found from the documents' stored paths, so the index needs no field of its
//! own for them; what is learnt is kept between the queue's rounds ([`Projects`]).

use std::collections::{HashMap, HashSet};

use tantivy::query::{BooleanQuery, Occur, Query, TermSetQuery};
use tantivy::schema::Value;
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use crate::IndexError;
use crate::document::{documents, term};
use crate::schema::Fields;

/// Build manifests: a file of this name makes its folder a project's root. Each with the word
/// its title starts with as the index keeps it, and its extension, by which the index is asked
/// for it.
const MANIFESTS: &[(&str, &str, &str)] = &[
    ("Cargo.toml", "cargo", "toml"),
    ("package.json", "package", "json"),
    ("pyproject.toml", "pyproject", "toml"),
    ("setup.py", "setup", "py"),
    ("go.mod", "go", "mod"),
    ("pom.xml", "pom", "xml"),
    ("build.gradle", "build", "gradle"),
    ("build.gradle.kts", "build", "kts"),
    ("CMakeLists.txt", "cmakelists", "txt"),
    ("meson.build", "meson", "build"),
    ("composer.json", "composer", "json"),
    ("configure.ac", "configure", "ac"),
];

/// A document's place: the connector it belongs to and its path there.
struct Place {
    connector: String,
    path: String,
}

impl Place {
    /// Where the stored document `doc` is; `None` for a document without a path.
    fn of(doc: &TantivyDocument, f: &Fields) -> Option<Place> {
        let text = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_str().map(str::to_owned))
        };
        Some(Place {
            connector: text(f.connector)?,
            path: text(f.path)?,
        })
    }

    /// The folders above it, the connector's root (`""`) first.
    fn folders(&self) -> impl Iterator<Item = &str> {
        std::iter::once("").chain(
            self.path
                .match_indices('/')
                .map(|(at, _)| &self.path[..at])
                .filter(|folder| !folder.is_empty()),
        )
    }

    /// The file's name.
    fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// The projects of an index as the embedding queue last saw them, and the pending prose it
/// found in them (by key), so that each document is looked at once while the projects stay the
/// same. Bounded by the index: at most one key per document of it.
#[derive(Debug, Default)]
pub(crate) struct Projects {
    /// Per connector, the folders that are a project's root (`""`: the connector's root).
    roots: Roots,
    /// Keys of documents found inside a project.
    inside: HashSet<String>,
}

impl Projects {
    /// Finds the projects again; when one has gone, what was found inside them is forgotten.
    pub(crate) fn refresh(&mut self, searcher: &Searcher, f: &Fields) -> Result<(), IndexError> {
        let roots = roots(searcher, f)?;
        let kept = self.roots.iter().all(|(connector, folders)| {
            roots
                .get(connector)
                .is_some_and(|now| folders.is_subset(now))
        });
        if !kept {
            self.inside.clear();
        }
        self.roots = roots;
        Ok(())
    }

    /// Whether there are projects at all.
    pub(crate) fn any(&self) -> bool {
        !self.roots.is_empty()
    }

    /// Whether the stored document `doc`, keyed `key`, is inside a project; remembers it if so.
    pub(crate) fn holds(&mut self, key: &str, doc: &TantivyDocument, f: &Fields) -> bool {
        let Some(place) = Place::of(doc, f) else {
            return false;
        };
        let inside = self
            .roots
            .get(&place.connector)
            .is_some_and(|roots| place.folders().any(|folder| roots.contains(folder)));
        if inside {
            self.inside.insert(key.to_owned());
        }
        inside
    }

    /// The documents known to be inside a project.
    pub(crate) fn known_inside(&self, f: &Fields) -> Box<dyn Query> {
        Box::new(TermSetQuery::new(
            self.inside.iter().map(|k| Term::from_field_text(f.key, k)),
        ))
    }
}

/// Per connector, the folders that are a project's root.
type Roots = HashMap<String, HashSet<String>>;

/// The roots of the projects in the index: the folders of its build manifests.
fn roots(searcher: &Searcher, f: &Fields) -> Result<Roots, IndexError> {
    let manifests: Vec<(Occur, Box<dyn Query>)> = MANIFESTS
        .iter()
        .map(|(_, word, ext)| {
            let query: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
                (Occur::Must, term(f.title, word)),
                (Occur::Must, term(f.ext, ext)),
            ]));
            (Occur::Should, query)
        })
        .collect();
    let query = BooleanQuery::new(vec![
        (Occur::Must, documents()),
        (Occur::Must, Box::new(BooleanQuery::new(manifests))),
    ]);
    let mut roots = Roots::new();
    for address in addresses(searcher, &query)? {
        let doc: TantivyDocument = searcher.doc(address)?;
        let Some(place) = Place::of(&doc, f) else {
            continue;
        };
        if MANIFESTS.iter().any(|(name, _, _)| place.name() == *name) {
            let folder = place.path.rsplit_once('/').map_or("", |(folder, _)| folder);
            roots
                .entry(place.connector.clone())
                .or_default()
                .insert(folder.to_owned());
        }
    }
    Ok(roots)
}

/// Every document `query` matches.
fn addresses(searcher: &Searcher, query: &dyn Query) -> Result<Vec<DocAddress>, IndexError> {
    Ok(searcher
        .search(query, &tantivy::collector::DocSetCollector)?
        .into_iter()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(path: &str) -> Place {
        Place {
            connector: "cn_home".into(),
            path: path.into(),
        }
    }

    #[test]
    fn a_paths_folders_run_from_the_connectors_root_down() {
        let readme = place("src/tokio-1.40/README.md");
        let folders: Vec<&str> = readme.folders().collect();
        assert_eq!(folders, ["", "src", "src/tokio-1.40"]);
        assert_eq!(readme.name(), "README.md");
        let manifest = place("Cargo.toml");
        let at_root: Vec<&str> = manifest.folders().collect();
        assert_eq!(at_root, [""]);
    }
}
