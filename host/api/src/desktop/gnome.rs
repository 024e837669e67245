//! `org.gnome.Shell.SearchProvider2`: what GNOME Shell's overview asks as the user types.

use std::collections::HashMap;
use std::sync::Arc;

use zbus::fdo;
use zbus::message::Header;
use zbus::zvariant::Value;

use super::found::{Finder, query_of};

/// GNOME Shell's search provider.
pub(crate) struct Provider {
    finder: Arc<Finder>,
}

impl Provider {
    pub(crate) fn new(finder: Arc<Finder>) -> Provider {
        Provider { finder }
    }
}

#[zbus::interface(name = "org.gnome.Shell.SearchProvider2")]
impl Provider {
    /// The ids of the documents `terms` find, best first.
    async fn get_initial_result_set(
        &self,
        terms: Vec<String>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
    ) -> fdo::Result<Vec<String>> {
        self.result_ids(connection, &header, &terms).await
    }

    /// The same for the longer terms the user typed on: a search of its own, since a longer
    /// query can rank what it finds differently.
    async fn get_subsearch_result_set(
        &self,
        _previous_results: Vec<String>,
        terms: Vec<String>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
    ) -> fdo::Result<Vec<String>> {
        self.result_ids(connection, &header, &terms).await
    }

    /// Each result's name, one-line description and icon.
    async fn get_result_metas(
        &self,
        identifiers: Vec<String>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
    ) -> fdo::Result<Vec<HashMap<String, Value<'static>>>> {
        self.finder.check_caller(connection, &header).await?;
        let found = self.finder.metas(&identifiers).await;
        Ok(found
            .into_iter()
            .map(|f| {
                HashMap::from([
                    ("id".to_owned(), Value::from(f.id)),
                    ("name".to_owned(), Value::from(f.title)),
                    ("description".to_owned(), Value::from(f.description)),
                    ("gicon".to_owned(), Value::from(f.icon)),
                ])
            })
            .collect())
    }

    /// Opens the result: the file itself for a local document the desktop can show, else its
    /// page in Quarry's document view.
    async fn activate_result(
        &self,
        identifier: String,
        terms: Vec<String>,
        _timestamp: u32,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
    ) -> fdo::Result<()> {
        self.finder.check_caller(connection, &header).await?;
        self.finder
            .activate(&identifier, &query_of(&terms), false)
            .await
    }

    /// "More results": Quarry's search page with the query.
    async fn launch_search(
        &self,
        terms: Vec<String>,
        _timestamp: u32,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
    ) -> fdo::Result<()> {
        self.finder.check_caller(connection, &header).await?;
        self.finder.launch_search(&query_of(&terms)).await
    }
}

impl Provider {
    /// The ids of what `terms` find, for a caller that is the user.
    async fn result_ids(
        &self,
        connection: &zbus::Connection,
        header: &Header<'_>,
        terms: &[String],
    ) -> fdo::Result<Vec<String>> {
        self.finder.check_caller(connection, header).await?;
        let found = self.finder.find(terms).await;
        Ok(found.into_iter().map(|f| f.id).collect())
    }
}
