//! `quarry plugin new LANG NAME`: a small working connector to start from, in Rust, Python or
//! JavaScript, with the WIT it implements, a build script and a README that walks the author from
//! the first edit to search results. The templates (`plugins/templates/`) and, for Rust, the SDK
//! are compiled into the binary, so the command works anywhere.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::ValueEnum;

/// Languages a connector can be started in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// Rust, with the Quarry SDK (cargo, wasm32-wasip2).
    Rust,
    /// Python (componentize-py).
    Python,
    /// JavaScript (componentize-js).
    Js,
}

/// One file of a scaffold: path inside it, template text, whether it is a script.
struct File {
    path: &'static str,
    text: &'static str,
    executable: bool,
}

const fn file(path: &'static str, text: &'static str) -> File {
    File {
        path,
        text,
        executable: false,
    }
}

const fn script(path: &'static str, text: &'static str) -> File {
    File {
        path,
        text,
        executable: true,
    }
}

macro_rules! template {
    ($path:literal) => {
        include_str!(concat!("../../../plugins/templates/", $path))
    };
}

macro_rules! sdk {
    ($file:literal) => {
        file(
            concat!("vendor/quarry-sdk/src/", $file),
            include_str!(concat!("../../../plugins/sdk/src/", $file)),
        )
    };
}

/// The WIT every scaffold is built against, the newest the host runs (0.5.0: change hints,
/// texts fetched several at a time, scans read by the host's OCR, connections and watching),
/// which the SDK of each language implements.
fn wit() -> File {
    file(
        "wit/connector@0.5.0/connector.wit",
        include_str!("../../../wit/connector@0.5.0/connector.wit"),
    )
}

/// Files every scaffold has.
fn common() -> [File; 3] {
    [
        file("README.md", template!("README.md.tmpl")),
        wit(),
        file(
            ".gitignore",
            "*.wasm\n*.wasm.tmp\ntarget/\nnode_modules/\n__pycache__/\n",
        ),
    ]
}

fn files(lang: Lang) -> Vec<File> {
    let mut files: Vec<File> = common().into();
    match lang {
        Lang::Rust => files.extend([
            file("Cargo.toml", template!("rust/Cargo.toml.tmpl")),
            file("src/lib.rs", template!("rust/lib.rs.tmpl")),
            file(
                "quarry-plugin.toml",
                template!("rust/quarry-plugin.toml.tmpl"),
            ),
            script("build.sh", template!("rust/build.sh.tmpl")),
            file(
                "vendor/quarry-sdk/Cargo.toml",
                template!("rust/sdk-Cargo.toml.tmpl"),
            ),
            sdk!("lib.rs"),
            sdk!("config.rs"),
            sdk!("dates.rs"),
            sdk!("dav.rs"),
            sdk!("fs.rs"),
            sdk!("helpers.rs"),
            sdk!("html.rs"),
            sdk!("http.rs"),
            sdk!("log.rs"),
            sdk!("net.rs"),
            sdk!("ocr.rs"),
            sdk!("text.rs"),
        ]),
        Lang::Python => files.extend([
            file("app.py", template!("python/app.py.tmpl")),
            file(
                "quarry_sdk.py",
                include_str!("../../../plugins/python/sdk/quarry_sdk.py"),
            ),
            file(
                "quarry-plugin.toml",
                template!("python/quarry-plugin.toml.tmpl"),
            ),
            script("build.sh", template!("python/build.sh.tmpl")),
        ]),
        Lang::Js => files.extend([
            file("connector.js", template!("js/connector.js.tmpl")),
            file(
                "quarry-plugin.toml",
                template!("js/quarry-plugin.toml.tmpl"),
            ),
            file("package.json", template!("js/package.json.tmpl")),
            file(
                "sdk/connector.js",
                include_str!("../../../plugins/js/sdk/connector.js"),
            ),
            file(
                "sdk/errors.js",
                include_str!("../../../plugins/js/sdk/errors.js"),
            ),
            file("build.mjs", include_str!("../../../plugins/js/build.mjs")),
            script("build.sh", template!("js/build.sh.tmpl")),
        ]),
    }
    files
}

/// What the README says for each language.
struct Words {
    language: &'static str,
    /// The WIT version it implements.
    wit: &'static str,
    source: &'static str,
    edit: &'static str,
    needs: &'static str,
    sample: &'static str,
}

fn words(lang: Lang) -> Words {
    match lang {
        Lang::Rust => Words {
            language: "Rust",
            wit: "0.5.0",
            source: "src/lib.rs",
            edit: "it indexes the `.txt` and `.md` files of a granted folder; `list_docs` says what exists, `fetch_content` gives a document's text.",
            needs: "once: `rustup target add wasm32-wasip2`; without rustup's target, Quarry's `scripts/wasm-cargo.sh` builds with Debian's rustc-web, then copy the component from `target/wasm32-wasip2/release/`",
            sample: "folder=/path/to/notes",
        },
        Lang::Python => Words {
            language: "Python",
            wit: "0.5.0",
            source: "app.py",
            edit: "it indexes the `.txt` and `.md` files of a granted folder; `list_docs` says what exists, `list_changes` answers the host's change hints, `fetch_content` gives a document's text. `quarry_sdk.py` answers the other calls and has the helpers (`walk`, `read_start`, `changed_files`, `progress`, `recognize_text`). Import at the top of `app.py` every module you use: componentize-py includes what is imported while it builds.",
            needs: "once: `pip install componentize-py==0.25.1`",
            sample: "folder=/path/to/notes",
        },
        Lang::Js => Words {
            language: "JavaScript",
            wit: "0.5.0",
            source: "connector.js",
            edit: "it indexes the `.txt` and `.md` files of a granted folder; `listDocs` says what exists, `listChanges` answers the host's change hints, `fetchContent` gives a document's text. `sdk/connector.js` answers the other calls and has the helpers (`walk`, `readStart`, `changedFiles`, `progress`); `fetch` works, to the hosts a `url` setting or `capabilities.network` grants.",
            needs: "Node.js 18 or later; the first build runs `npm install` (componentize-js)",
            sample: "folder=/path/to/notes",
        },
    }
}

/// The plugin id for a name: lowercase letters, digits and `-`, starting with a letter.
fn plugin_id(name: &str) -> anyhow::Result<String> {
    let mut id = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.ends_with('-') && !id.is_empty() {
            id.push('-');
        }
    }
    let id = id.trim_end_matches('-').to_owned();
    if !id.starts_with(|c: char| c.is_ascii_lowercase()) || id.len() > 64 {
        bail!(
            "NAME {name:?}: use letters, digits and '-' (at most 64), starting with a letter, like my-notes"
        );
    }
    Ok(id)
}

/// Writes a new connector called `name` in `lang` into `<parent>/<id>`; returns that folder.
pub fn create(lang: Lang, name: &str, parent: &Path) -> anyhow::Result<PathBuf> {
    let id = plugin_id(name)?;
    let dir = parent.join(&id);
    if dir.exists() {
        bail!(
            "{} already exists; pick another name or remove it",
            dir.display()
        );
    }
    let w = words(lang);
    let crate_name = id.replace('-', "_");
    let fill = |text: &str| {
        text.replace("{{id}}", &id)
            .replace("{{name}}", name.trim())
            .replace("{{crate}}", &crate_name)
            .replace("{{language}}", w.language)
            .replace("{{wit}}", w.wit)
            .replace("{{source}}", w.source)
            .replace("{{edit}}", w.edit)
            .replace("{{needs}}", w.needs)
            .replace("{{sample}}", w.sample)
    };
    for f in files(lang) {
        let path = dir.join(f.path);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("cannot create {}", folder.display()))?;
        }
        std::fs::write(&path, fill(f.text))
            .with_context(|| format!("cannot write {}", path.display()))?;
        if f.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("cannot make {} executable", path.display()))?;
        }
    }
    Ok(dir)
}

/// The sample `--set` of a language's template, for the next steps printed after `new`.
pub fn sample_setting(lang: Lang) -> &'static str {
    words(lang).sample
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_names() -> anyhow::Result<()> {
        assert_eq!(plugin_id("My Notes")?, "my-notes");
        assert_eq!(plugin_id("  bookmarks_2 ")?, "bookmarks-2");
        assert!(plugin_id("42").is_err());
        assert!(plugin_id("--").is_err());
        Ok(())
    }

    #[test]
    fn every_placeholder_is_filled() -> anyhow::Result<()> {
        let parent = tempfile::tempdir()?;
        for (lang, name) in [
            (Lang::Rust, "Rusty"),
            (Lang::Python, "Snake"),
            (Lang::Js, "Jay"),
        ] {
            let dir = create(lang, name, parent.path())?;
            for f in files(lang) {
                let text = std::fs::read_to_string(dir.join(f.path))?;
                assert!(
                    !text.contains("{{"),
                    "{} of {lang:?} keeps a placeholder",
                    f.path
                );
            }
            assert!(
                create(lang, name, parent.path()).is_err(),
                "an existing folder is kept"
            );
        }
        Ok(())
    }
}
