//! What both desktop searches share: a keyword search as the user, bounded in time and in the
//! searches run at once, and the results it found lately, so that the shell's questions about
//! them (their metas, opening one) need no second search.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quarry_core::{ConnectorId, DocId};
use quarry_store::{ConnectorStatus, Sharing};
use serde_json::{Map, Value};
use tokio::sync::{OnceCell, Semaphore};
use zbus::fdo;
use zbus::message::Header;
use zbus::names::BusName;

use super::names::DesktopConfig;
use crate::routes::search::{self, MAX_QUERY_CHARS};
use crate::state::AppState;
use crate::views::HitView;

/// How long a desktop search may take before it answers with nothing: the shell shows the other
/// providers' results meanwhile, and a search that waits for a turn past this is dropped.
const ANSWER_WITHIN: Duration = Duration::from_millis(1500);
/// Results one search gives the shell (GNOME shows a few of them, KRunner more).
const RESULTS: i64 = 10;
/// The results remembered for the shell's later questions.
const RECENT: usize = 256;
/// Desktop searches run at once; more wait for a turn, up to the answer's time.
const SEARCHES_AT_ONCE: usize = 2;
/// The shortest query searched (in characters): one letter matches half the index.
pub(super) const SHORTEST_QUERY: usize = 2;
/// A keyword result's score from here up has every word of the query (the index's first tier).
/// The shell shows those alone when there are some, as a desktop search narrows while the
/// person types more words; else the results with some of the words.
const EVERY_WORD: f64 = 0.5;
/// The longest description shown under a title, in characters.
const DESCRIPTION_CHARS: usize = 160;

/// One result, as the shell shows it.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The result's id on the bus: `{connector_id}/{doc_id}`, then `#{page}` for a page.
    pub id: String,
    pub title: String,
    /// One line: the connector, the path, the passage found.
    pub description: String,
    /// A freedesktop icon name for the document's type.
    pub icon: &'static str,
    /// The connector's name.
    pub category: String,
    /// What was searched for.
    pub query: String,
}

/// What `work` answers, run in one of `turns` and within `within` in all (the wait for a turn
/// included); `None` when it cannot start and end in time.
async fn in_turn<T>(
    turns: &Semaphore,
    within: Duration,
    work: impl Future<Output = Option<T>>,
) -> Option<T> {
    let turn_then_work = async {
        let _turn = turns.acquire().await.ok()?;
        work.await
    };
    tokio::time::timeout(within, turn_then_work)
        .await
        .ok()
        .flatten()
}

/// Searches for the desktop, as the user.
pub(crate) struct Finder {
    pub(super) state: Arc<AppState>,
    pub(super) config: DesktopConfig,
    turns: Semaphore,
    recent: Mutex<VecDeque<Found>>,
    bus: OnceCell<fdo::DBusProxy<'static>>,
}

impl Finder {
    pub(crate) fn new(state: Arc<AppState>, config: DesktopConfig) -> Finder {
        Finder {
            state,
            config,
            turns: Semaphore::new(SEARCHES_AT_ONCE),
            recent: Mutex::new(VecDeque::new()),
            bus: OnceCell::new(),
        }
    }

    /// Refuses a caller that is not this process's user: the session bus is the user's, but a
    /// bus opened to others must not give them the user's documents.
    pub(crate) async fn check_caller(
        &self,
        connection: &zbus::Connection,
        header: &Header<'_>,
    ) -> fdo::Result<()> {
        let refused = || fdo::Error::AccessDenied("Quarry answers its own user only".to_owned());
        let sender = header.sender().ok_or_else(refused)?;
        let bus = self
            .bus
            .get_or_try_init(|| async {
                fdo::DBusProxy::builder(connection)
                    .cache_properties(zbus::proxy::CacheProperties::No)
                    .build()
                    .await
            })
            .await?;
        let uid = bus
            .get_connection_unix_user(BusName::from(sender.to_owned()))
            .await?;
        if uid == rustix::process::getuid().as_raw() {
            Ok(())
        } else {
            Err(refused())
        }
    }

    /// The documents `terms` find, best first: none for a query shorter than two characters,
    /// and none when the search cannot start and end within the answer's time.
    pub(crate) async fn find(&self, terms: &[String]) -> Vec<Found> {
        let query = query_of(terms);
        if query.chars().count() < SHORTEST_QUERY {
            return Vec::new();
        }
        let search = async {
            search::answer(&self.state, &Sharing::All, &request(&query))
                .await
                .map_err(|e| tracing::warn!(error = %e.message, "a desktop search failed"))
                .ok()
        };
        let Some(answer) = in_turn(&self.turns, ANSWER_WITHIN, search).await else {
            return Vec::new();
        };
        let mut results = answer.results;
        if results.first().is_some_and(|best| best.score >= EVERY_WORD) {
            results.retain(|hit| hit.score >= EVERY_WORD);
        }
        let found: Vec<Found> = results
            .into_iter()
            .filter_map(|hit| Found::new(hit, &query))
            .collect();
        self.remember(&found);
        found
    }

    fn remember(&self, found: &[Found]) {
        let Ok(mut recent) = self.recent.lock() else {
            return;
        };
        for f in found {
            recent.retain(|r| r.id != f.id);
            recent.push_back(f.clone());
        }
        while recent.len() > RECENT {
            recent.pop_front();
        }
    }

    /// Forgets the results found so far (the shell's session ended).
    pub(crate) fn forget(&self) {
        if let Ok(mut recent) = self.recent.lock() {
            recent.clear();
        }
    }

    /// The results with these ids, in their order: those found lately, else the catalog's
    /// documents (held-back ones and those of disabled connectors left out).
    pub(crate) async fn metas(&self, ids: &[String]) -> Vec<Found> {
        let mut out = Vec::new();
        for id in ids.iter().take(RECENT) {
            if let Some(found) = self.recalled(id) {
                out.push(found);
            } else if let Some(found) = self.in_catalog(id).await {
                out.push(found);
            }
        }
        out
    }

    pub(crate) fn recalled(&self, id: &str) -> Option<Found> {
        let recent = self.recent.lock().ok()?;
        recent.iter().rev().find(|r| r.id == id).cloned()
    }

    async fn in_catalog(&self, id: &str) -> Option<Found> {
        let (connector, doc, _) = parse_id(id)?;
        let store = &self.state.store;
        let owner = store.connector(&connector).await.ok()??;
        if owner.status == ConnectorStatus::Disabled {
            return None;
        }
        let catalog = store.catalog_doc(&connector, &doc).await.ok()??;
        if catalog.held_back.is_some() {
            return None;
        }
        let meta = catalog.meta;
        let place = meta.path.clone().unwrap_or_default();
        Some(Found {
            id: id.to_owned(),
            description: one_line(&[&owner.name, &place]),
            icon: icon_for(&meta.mime_type),
            title: meta.title,
            category: owner.name,
            query: String::new(),
        })
    }
}

impl Found {
    fn new(hit: HitView, query: &str) -> Option<Found> {
        let doc = hit.doc;
        let connector = ConnectorId::parse(doc.connector_id.clone()).ok()?;
        let doc_id = DocId::parse(doc.doc_id.clone()).ok()?;
        let category = doc.connector_name.unwrap_or_default();
        let place = doc.path.as_deref().unwrap_or_default();
        Some(Found {
            id: result_id(&connector, &doc_id, hit.page),
            description: one_line(&[&category, place, &hit.snippet]),
            icon: icon_for(&doc.mime_type),
            title: doc.title,
            category,
            query: query.to_owned(),
        })
    }
}

/// The search request: keyword only (a desktop search never waits for the model).
fn request(query: &str) -> Map<String, Value> {
    Map::from_iter([
        ("query".to_owned(), Value::from(query)),
        ("limit".to_owned(), Value::from(RESULTS)),
        ("semantic_search".to_owned(), Value::from(false)),
    ])
}

/// The shell's terms as one query, clipped to what a search takes.
pub(crate) fn query_of(terms: &[String]) -> String {
    let joined = terms.join(" ");
    joined.trim().chars().take(MAX_QUERY_CHARS).collect()
}

fn result_id(connector: &ConnectorId, doc: &DocId, page: Option<u64>) -> String {
    match page {
        Some(page) => format!("{connector}/{doc}#{page}"),
        None => format!("{connector}/{doc}"),
    }
}

/// The connector, document and page of a result's id; `None` for anything else.
pub(crate) fn parse_id(id: &str) -> Option<(ConnectorId, DocId, Option<u64>)> {
    let (connector, rest) = id.split_once('/')?;
    let (doc, page) = match rest.split_once('#') {
        Some((doc, page)) => (doc, Some(page.parse().ok()?)),
        None => (rest, None),
    };
    Some((
        ConnectorId::parse(connector).ok()?,
        DocId::parse(doc).ok()?,
        page,
    ))
}

/// The parts that are not empty, joined on one line, clipped.
fn one_line(parts: &[&str]) -> String {
    let joined = parts
        .iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    if joined.chars().count() <= DESCRIPTION_CHARS {
        return joined;
    }
    let mut clipped: String = joined.chars().take(DESCRIPTION_CHARS - 1).collect();
    clipped.push('…');
    clipped
}

/// The freedesktop icon for a media type.
pub(crate) fn icon_for(mime: &str) -> &'static str {
    let has = |part: &str| mime.contains(part);
    match mime {
        "application/pdf" => "application-pdf",
        "message/rfc822" => "mail-read",
        "text/calendar" => "x-office-calendar",
        "text/vcard" => "x-office-address-book",
        "text/html" => "text-html",
        "text/csv" => "x-office-spreadsheet",
        _ if mime.starts_with("image/") => "image-x-generic",
        _ if mime.starts_with("audio/") => "audio-x-generic",
        _ if mime.starts_with("video/") => "video-x-generic",
        _ if has("spreadsheet") || has("ms-excel") => "x-office-spreadsheet",
        _ if has("presentation") || has("powerpoint") => "x-office-presentation",
        _ if has("wordprocessing") || has("msword") || has("opendocument.text") => {
            "x-office-document"
        }
        _ if mime.starts_with("text/x-") || has("javascript") || has("json") => "text-x-script",
        _ => "text-x-generic",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn two_searches_run_at_once_and_none_answers_after_a_second_and_a_half() {
        let turns = Semaphore::new(SEARCHES_AT_ONCE);
        let first = turns.acquire().await.expect("a turn");
        let second = turns.acquire().await.expect("a turn");
        let started = tokio::time::Instant::now();
        let third = in_turn(&turns, ANSWER_WITHIN, async { Some("found") }).await;
        assert_eq!(third, None, "no turn came within the answer's time");
        assert_eq!(started.elapsed(), ANSWER_WITHIN);
        drop(first);
        let now = in_turn(&turns, ANSWER_WITHIN, async { Some("found") }).await;
        assert_eq!(now, Some("found"), "a turn freed is taken");
        let slow = in_turn(&turns, ANSWER_WITHIN, async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Some("late")
        })
        .await;
        assert_eq!(
            slow, None,
            "a search slower than the answer's time is given up"
        );
        assert_eq!(turns.available_permits(), 1, "and its turn given back");
        drop(second);
    }

    #[test]
    fn a_result_id_names_its_document_and_page_and_nothing_else_parses() {
        let connector = ConnectorId::parse("cn_abc").expect("id");
        let doc = DocId::parse("d_1-x").expect("id");
        let id = result_id(&connector, &doc, Some(3));
        assert_eq!(id, "cn_abc/d_1-x#3");
        assert_eq!(
            parse_id(&id),
            Some((connector.clone(), doc.clone(), Some(3)))
        );
        assert_eq!(parse_id("cn_abc/d_1-x"), Some((connector, doc, None)));
        for wrong in [
            "",
            "cn_abc",
            "cn_abc/",
            "cn_abc/d#x",
            "cn_abc/../etc",
            "a b/c",
        ] {
            assert_eq!(parse_id(wrong), None, "{wrong:?}");
        }
    }

    #[test]
    fn a_description_is_one_clipped_line() {
        let long = "word ".repeat(100);
        let line = one_line(&["Notes", "a/b.md", &format!("first\nsecond  {long}")]);
        assert!(line.starts_with("Notes · a/b.md · first second word"));
        assert_eq!(line.chars().count(), DESCRIPTION_CHARS);
        assert!(!line.contains('\n'));
        assert_eq!(one_line(&["Notes", "", "x"]), "Notes · x");
    }

    #[test]
    fn icons_follow_the_media_type() {
        assert_eq!(icon_for("application/pdf"), "application-pdf");
        assert_eq!(icon_for("image/png"), "image-x-generic");
        assert_eq!(
            icon_for("application/vnd.openxmlformats-officedocument.presentationml.presentation"),
            "x-office-presentation"
        );
        assert_eq!(icon_for("text/markdown"), "text-x-generic");
    }
}
