//! `org.kde.krunner1`: what KRunner (Alt+Space) and Plasma's launcher ask as the user types.

use std::collections::HashMap;
use std::sync::Arc;

use zbus::fdo;
use zbus::message::Header;
use zbus::zvariant::Value;

use super::found::Finder;

/// The action that shows a result in Quarry's document view, even for a local file.
pub(crate) const VIEW_ACTION: &str = "quarry-view";
/// KRunner's "possible match", the type of a search result that is not an exact answer.
const POSSIBLE_MATCH: i32 = 30;

/// One match: id, text, icon name, type, relevance (0 to 1), properties.
pub(crate) type Match = (
    String,
    String,
    String,
    i32,
    f64,
    HashMap<String, Value<'static>>,
);

/// The KRunner runner.
pub(crate) struct Runner {
    finder: Arc<Finder>,
}

impl Runner {
    pub(crate) fn new(finder: Arc<Finder>) -> Runner {
        Runner { finder }
    }
}

#[zbus::interface(name = "org.kde.krunner1")]
impl Runner {
    /// The actions a match offers besides opening it.
    async fn actions(&self) -> Vec<(String, String, String)> {
        vec![(
            VIEW_ACTION.to_owned(),
            "Show in Quarry".to_owned(),
            "edit-find".to_owned(),
        )]
    }

    /// The documents `query` finds, best first, their relevance falling with their rank.
    #[zbus(name = "Match")]
    async fn find_matches(
        &self,
        query: String,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
    ) -> fdo::Result<Vec<Match>> {
        self.finder.check_caller(connection, &header).await?;
        let found = self.finder.find(&[query]).await;
        Ok(found
            .into_iter()
            .enumerate()
            .map(|(rank, f)| {
                let properties = HashMap::from([
                    ("subtext".to_owned(), Value::from(f.description)),
                    ("category".to_owned(), Value::from(f.category)),
                ]);
                let relevance = 1.0 - rank as f64 / 100.0;
                (
                    f.id,
                    f.title,
                    f.icon.to_owned(),
                    POSSIBLE_MATCH,
                    relevance,
                    properties,
                )
            })
            .collect())
    }

    /// Opens a match (as GNOME's activation does), or shows it in Quarry (`quarry-view`).
    async fn run(
        &self,
        match_id: String,
        action_id: String,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
    ) -> fdo::Result<()> {
        self.finder.check_caller(connection, &header).await?;
        let query = self
            .finder
            .recalled(&match_id)
            .map(|f| f.query)
            .unwrap_or_default();
        let view_only = match action_id.as_str() {
            "" => false,
            VIEW_ACTION => true,
            other => {
                return Err(fdo::Error::InvalidArgs(format!(
                    "no action {other:?}: Quarry's matches have the default action and {VIEW_ACTION:?}"
                )));
            }
        };
        self.finder.activate(&match_id, &query, view_only).await
    }

    /// KRunner's session ended: the matches are forgotten.
    async fn teardown(&self) {
        self.finder.forget();
    }
}
