//! `quarry desktop-search`: what the session bus starts when the shell searches and the service
//! is not running. It answers every search with one result saying so, starts nothing heavy (no
//! data folder, no index), gives the name up to the service as soon as it starts, and ends
//! after a quiet minute.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::Notify;
use zbus::fdo::{RequestNameFlags, RequestNameReply};
use zbus::zvariant::Value;

use super::found::SHORTEST_QUERY;
use super::krunner::Match;
use super::names::{BUS_NAME, DesktopError, GNOME_PATH, KRUNNER_PATH};

/// How long it waits for the shell's next question before it ends.
const QUIET: Duration = Duration::from_secs(60);
/// Its one result's id.
const NOTICE_ID: &str = "quarry-not-running";
const NOTICE: &str = "Quarry is not running";
const HOW_TO_START: &str =
    "Start it to search your documents here: systemctl --user start quarry, or quarry serve";
const ICON: &str = "dialog-information";

/// Answers on the session bus until the service takes the name or no one asks for a minute.
pub async fn serve_not_running() -> Result<(), DesktopError> {
    let asked = Arc::new(Notify::new());
    let connection = zbus::connection::Builder::session()?
        .serve_at(GNOME_PATH, Notice(asked.clone()))?
        .serve_at(KRUNNER_PATH, RunnerNotice(asked.clone()))?
        .build()
        .await?;
    let flags = RequestNameFlags::AllowReplacement | RequestNameFlags::DoNotQueue;
    match connection.request_name_with_flags(BUS_NAME, flags).await {
        Ok(RequestNameReply::PrimaryOwner | RequestNameReply::AlreadyOwner) => {}
        // The service (or another of these) answers already.
        Ok(_) | Err(zbus::Error::NameTaken) => return Ok(()),
        Err(e) => return Err(e.into()),
    }
    let bus = zbus::fdo::DBusProxy::new(&connection).await?;
    let mut lost = bus.receive_name_lost().await?;
    loop {
        tokio::select! {
            _ = lost.next() => return Ok(()),
            quiet = tokio::time::timeout(QUIET, asked.notified()) => {
                if quiet.is_err() {
                    return Ok(());
                }
            }
        }
    }
}

/// GNOME Shell's provider while the service is not running.
struct Notice(Arc<Notify>);

#[zbus::interface(name = "org.gnome.Shell.SearchProvider2")]
impl Notice {
    async fn get_initial_result_set(&self, terms: Vec<String>) -> Vec<String> {
        self.0.notify_one();
        notice_for(&terms.join(" "))
    }

    async fn get_subsearch_result_set(
        &self,
        _previous_results: Vec<String>,
        terms: Vec<String>,
    ) -> Vec<String> {
        self.0.notify_one();
        notice_for(&terms.join(" "))
    }

    async fn get_result_metas(&self, identifiers: Vec<String>) -> Vec<HashMap<String, Value<'_>>> {
        self.0.notify_one();
        identifiers
            .iter()
            .filter(|id| *id == NOTICE_ID)
            .map(|_| {
                HashMap::from([
                    ("id".to_owned(), Value::from(NOTICE_ID)),
                    ("name".to_owned(), Value::from(NOTICE)),
                    ("description".to_owned(), Value::from(HOW_TO_START)),
                    ("gicon".to_owned(), Value::from(ICON)),
                ])
            })
            .collect()
    }

    async fn activate_result(&self, _identifier: String, _terms: Vec<String>, _timestamp: u32) {
        self.0.notify_one();
    }

    async fn launch_search(&self, _terms: Vec<String>, _timestamp: u32) {
        self.0.notify_one();
    }
}

/// KRunner's runner while the service is not running.
struct RunnerNotice(Arc<Notify>);

#[zbus::interface(name = "org.kde.krunner1")]
impl RunnerNotice {
    async fn actions(&self) -> Vec<(String, String, String)> {
        Vec::new()
    }

    #[zbus(name = "Match")]
    async fn find_matches(&self, query: String) -> Vec<Match> {
        self.0.notify_one();
        notice_for(&query)
            .into_iter()
            .map(|id| {
                let subtext = HashMap::from([("subtext".to_owned(), Value::from(HOW_TO_START))]);
                (id, NOTICE.to_owned(), ICON.to_owned(), 50, 0.1, subtext)
            })
            .collect()
    }

    async fn run(&self, _match_id: String, _action_id: String) {
        self.0.notify_one();
    }

    async fn teardown(&self) {}
}

/// The notice, for a query long enough to be a search.
fn notice_for(query: &str) -> Vec<String> {
    if query.trim().chars().count() >= SHORTEST_QUERY {
        vec![NOTICE_ID.to_owned()]
    } else {
        Vec::new()
    }
}
