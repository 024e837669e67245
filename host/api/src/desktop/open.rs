//! Opening what the desktop's search found: a local file by the desktop's own handler, or a page
//! of Quarry's search page in the browser, signed in. The browser gets the sign-in as a page in
//! the data folder (0600) that forwards to a one-time link: a link on the opener's command line
//! would be readable by every local user (`ps`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use quarry_core::{ConnectorId, DocId};
use quarry_store::{ConnectorStatus, Store, now_ms};
use zbus::fdo;

use super::found::{Finder, parse_id};
use super::names::DesktopConfig;
use crate::admin::LOGIN_LINK_MS;
use crate::views::document_link;

/// The folder, inside the private folder, of the pages that sign a browser in.
const PAGES: &str = "desktop-open";
/// How long such a page is kept: long enough for a browser to start and read it.
const PAGE_KEPT: Duration = Duration::from_secs(120);
/// How long the opener may run before it is left to itself (some wait for the program they
/// start); it is still reaped when it ends.
const OPENER_WITHIN: Duration = Duration::from_secs(10);

/// Media types a desktop shows as documents, opened as the file itself. Pages, scripts, SVG and
/// anything else (a `.desktop` file, a program) go to Quarry's document view instead.
const OPENS_AS_FILE: [&str; 12] = [
    "application/pdf",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/tiff",
    "text/plain",
    "text/markdown",
    "text/csv",
    "application/rtf",
    "application/msword",
    "application/vnd.ms-excel",
];
/// The prefixes of the office formats opened as files.
const OFFICE: [&str; 2] = [
    "application/vnd.openxmlformats-officedocument.",
    "application/vnd.oasis.opendocument.",
];

impl Finder {
    /// Opens a result: the local file when it is one the desktop shows as a document and
    /// `view_only` is false, else its page in the document view with `query`'s words marked.
    pub(crate) async fn activate(&self, id: &str, query: &str, view_only: bool) -> fdo::Result<()> {
        let (connector, doc, page) = parse_id(id).ok_or_else(|| {
            fdo::Error::InvalidArgs(format!("{id:?} is not a result Quarry gave"))
        })?;
        if !view_only && let Some(file) = self.local_file(&connector, &doc).await {
            return run_opener(&self.config.opener, file.as_os_str(), OPENER_WITHIN).await;
        }
        let next = document_link("", &connector, &doc, page, query);
        self.open_signed_in(&next).await
    }

    /// Opens the search page with `query`.
    pub(crate) async fn launch_search(&self, query: &str) -> fdo::Result<()> {
        self.open_signed_in(&search_page(query)).await
    }

    async fn open_signed_in(&self, next: &str) -> fdo::Result<()> {
        let base = &self.state.config.public_url;
        open_page(&self.state.store, base, &self.config, next)
            .await
            .map_err(fdo::Error::Failed)
    }

    /// The document's own file, when it is a local one to show: the connector's one granted
    /// folder joined with the document's path, a regular file (no link, no program) inside it,
    /// of a type the desktop shows as a document, not held back and served as it is.
    async fn local_file(&self, connector: &ConnectorId, doc: &DocId) -> Option<PathBuf> {
        let store = &self.state.store;
        let owner = store.connector(connector).await.ok()??;
        let mut folders = owner.grant.dirs.values();
        let (Some(root), None) = (folders.next(), folders.next()) else {
            return None;
        };
        if owner.status == ConnectorStatus::Disabled {
            return None;
        }
        let catalog = store.catalog_doc(connector, doc).await.ok()??;
        let served = !matches!(
            quarry_sync::serving(&owner.credentials, &catalog),
            quarry_sync::Serving::Refused(_)
        );
        if catalog.held_back.is_some() || !served || !opens_as_file(&catalog.meta.mime_type) {
            return None;
        }
        let relative = catalog.meta.path?;
        let root = PathBuf::from(root);
        tokio::task::spawn_blocking(move || inside(&root, Path::new(&relative)))
            .await
            .ok()?
    }
}

/// Opens Quarry's page `next` (a path on the service) in the browser, signed in: writes a
/// private page forwarding to a one-time sign-in link, and hands that page to the opener.
pub async fn open_page(
    store: &Store,
    base_url: &str,
    config: &DesktopConfig,
    next: &str,
) -> Result<(), String> {
    let code = store
        .create_login_link(now_ms(), LOGIN_LINK_MS)
        .await
        .map_err(|e| format!("cannot make a sign-in link: {e}"))?;
    let next: String = form_urlencoded::byte_serialize(next.as_bytes()).collect();
    let link = format!(
        "{}/settings/login?code={code}&next={next}",
        base_url.trim_end_matches('/')
    );
    let dir = config.private_dir.join(PAGES);
    let page = tokio::task::spawn_blocking(move || write_page(&dir, &link))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot write the page that signs the browser in: {e}"))?;
    run_opener(&config.opener, page.as_os_str(), OPENER_WITHIN)
        .await
        .map_err(|e| e.to_string())
}

/// The search page's address for `query`.
pub fn search_page(query: &str) -> String {
    if query.is_empty() {
        return "/search".to_owned();
    }
    let q: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("q", query)
        .finish();
    format!("/search?{q}")
}

fn opens_as_file(mime: &str) -> bool {
    OPENS_AS_FILE.contains(&mime) || OFFICE.iter().any(|p| mime.starts_with(p))
}

/// `root/relative` when `relative` is plain (no `..`, not absolute) and names a regular file
/// that no one may run, still inside `root` once links in the folders above it are resolved.
fn inside(root: &Path, relative: &Path) -> Option<PathBuf> {
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let path = root.join(relative);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.file_type().is_file() || meta.permissions().mode() & 0o111 != 0 {
        return None;
    }
    let (path, root) = (path.canonicalize().ok()?, root.canonicalize().ok()?);
    path.starts_with(&root).then_some(path)
}

/// Writes a page that forwards to `link` in `dir` (made 0700), readable by the user only, and
/// removes the pages older than [`PAGE_KEPT`].
fn write_page(dir: &Path, link: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let now = SystemTime::now();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).unwrap_or_default() > PAGE_KEPT);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let mut name = [0u8; 12];
    getrandom::fill(&mut name).map_err(std::io::Error::other)?;
    let path = dir.join(format!("open-{}.html", hex::encode(name)));
    let link = crate::admin::escape(link);
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <meta http-equiv=\"refresh\" content=\"0;url={link}\"><title>Quarry</title></head>\
         <body><p><a href=\"{link}\">Open Quarry</a></p></body></html>\n"
    );
    let mut options = std::fs::OpenOptions::new();
    std::os::unix::fs::OpenOptionsExt::mode(options.write(true).create_new(true), 0o600);
    std::io::Write::write_all(&mut options.open(&path)?, body.as_bytes())?;
    Ok(path)
}

/// Runs the opener on `target` without a shell; waits for it up to `within` ([`OPENER_WITHIN`]),
/// then leaves it running (reaped when it ends).
async fn run_opener(opener: &str, target: &std::ffi::OsStr, within: Duration) -> fdo::Result<()> {
    let mut child = tokio::process::Command::new(opener)
        .arg(target)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| fdo::Error::Failed(format!("cannot run {opener}: {e}")))?;
    match tokio::time::timeout(within, child.wait()).await {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(fdo::Error::Failed(format!("{opener} ended with {status}"))),
        Ok(Err(e)) => Err(fdo::Error::Failed(format!("{opener}: {e}"))),
        Err(_) => {
            tokio::spawn(async move { child.wait().await });
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_opener_that_keeps_running_is_waited_for_its_time_and_left_running() {
        let within = Duration::from_millis(300);
        let started = std::time::Instant::now();
        run_opener("sleep", std::ffi::OsStr::new("3"), within)
            .await
            .expect("a running opener is not a failure");
        let waited = started.elapsed();
        assert!(
            waited >= within && waited < Duration::from_secs(2),
            "{waited:?}"
        );
        let failed = run_opener("false", std::ffi::OsStr::new("x"), OPENER_WITHIN).await;
        assert!(failed.is_err(), "an opener that fails says so");
        let missing = run_opener("/nonexistent/opener", std::ffi::OsStr::new("x"), within).await;
        assert!(missing.is_err());
    }

    #[test]
    fn only_a_plain_regular_file_inside_the_folder_opens_as_itself() {
        let root = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let file = |p: &Path, mode: u32| {
            std::fs::write(p, "x").expect("write");
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("mode");
        };
        file(&root.path().join("letter.pdf"), 0o644);
        file(&root.path().join("run.pdf"), 0o755);
        file(&outside.path().join("secret.pdf"), 0o644);
        std::os::unix::fs::symlink(outside.path().join("secret.pdf"), root.path().join("l.pdf"))
            .expect("link");
        std::os::unix::fs::symlink(outside.path(), root.path().join("away")).expect("link");
        let at = |rel: &str| inside(root.path(), Path::new(rel));
        assert!(at("letter.pdf").is_some());
        for refused in [
            "run.pdf",
            "l.pdf",
            "away/secret.pdf",
            "../x",
            "/etc/passwd",
            ".",
        ] {
            assert_eq!(at(refused), None, "{refused}");
        }
    }

    #[test]
    fn the_sign_in_page_is_private_and_forwards_to_the_link() {
        let dir = tempfile::tempdir().expect("temp dir");
        let pages = dir.path().join(PAGES);
        let link = "http://127.0.0.1:1/settings/login?code=c&next=%2Fsearch";
        let page = write_page(&pages, link).expect("page");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&page), 0o600);
        assert_eq!(mode(&pages), 0o700);
        let body = std::fs::read_to_string(&page).expect("read");
        assert!(body.contains("url=http://127.0.0.1:1/settings/login?code=c&amp;next=%2Fsearch"));
        assert_ne!(write_page(&pages, link).expect("page"), page);
    }

    #[test]
    fn documents_open_as_files_and_pages_and_programs_do_not() {
        assert!(opens_as_file("application/pdf"));
        assert!(opens_as_file(
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        ));
        for not in [
            "text/html",
            "image/svg+xml",
            "application/x-desktop",
            "text/x-shellscript",
        ] {
            assert!(!opens_as_file(not), "{not}");
        }
    }
}
