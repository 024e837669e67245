//! Connectors: a plugin, its settings, the user's grant, and the state of its sync.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::db::{Row, Sql, scalar, sql};
use quarry_core::ConnectorId;

use crate::integrations::{check_name, unique_violation};
use crate::keys::random_id;
use crate::{Store, StoreError};

/// What a connector is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectorStatus {
    /// Up to date, or waiting for its next sync.
    Idle,
    /// A sync is running.
    Syncing,
    /// The last sync failed; `last_error` says why.
    Error,
    /// Switched off by the user: not synced, not searched.
    Disabled,
}

impl ConnectorStatus {
    /// The status as the API shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorStatus::Idle => "idle",
            ConnectorStatus::Syncing => "syncing",
            ConnectorStatus::Error => "error",
            ConnectorStatus::Disabled => "disabled",
        }
    }

    fn parse(s: &str) -> ConnectorStatus {
        match s {
            "syncing" => ConnectorStatus::Syncing,
            "error" => ConnectorStatus::Error,
            "disabled" => ConnectorStatus::Disabled,
            _ => ConnectorStatus::Idle,
        }
    }
}

/// A query of connectors' rows, each with the count of its held-back documents (cheap: they
/// have an index of their own), followed by `$rest` (`WHERE ...`).
macro_rules! select_connector {
    ($rest:literal) => {
        concat!(
            "SELECT c.*, (SELECT count(*) FROM documents d
                 WHERE d.connector_id = c.id AND d.held_back IS NOT NULL) AS held_back_count
             FROM connectors c ",
            $rest
        )
    };
}

/// What a connector does with a document that holds credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CredentialMode {
    /// Held back: not indexed, searchable, readable or downloadable (the default).
    #[default]
    Hold,
    /// Indexed with each secret replaced by a marker; the original file is not served. Files
    /// that are credentials as a whole (keys, keystores, password exports) are still held back.
    Redact,
    /// Indexed and served as they are.
    Off,
}

impl CredentialMode {
    /// The mode as the CLI, the API and the database name it.
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialMode::Hold => "hold",
            CredentialMode::Redact => "redact",
            CredentialMode::Off => "off",
        }
    }

    /// The mode named `name`; `None` for an unknown name.
    pub fn parse(name: &str) -> Option<CredentialMode> {
        match name {
            "hold" => Some(CredentialMode::Hold),
            "redact" => Some(CredentialMode::Redact),
            "off" => Some(CredentialMode::Off),
            _ => None,
        }
    }
}

/// A connector's choices about credentials: the mode, and the files the user released (paths
/// relative to the source, or patterns with `*`, `**` and `?`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CredentialPolicy {
    /// What is done with documents holding credentials.
    pub mode: CredentialMode,
    /// Paths or patterns indexed as they are, whatever they hold.
    pub released: Vec<String>,
}

/// Counts of the sync in progress, or of the last one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncProgress {
    /// Documents listed so far.
    pub listed: u64,
    /// Documents whose new version was indexed.
    pub indexed: u64,
    /// Documents whose text could not be extracted (indexed by title and path only).
    pub failed: u64,
    /// While a full listing runs: the documents it is still expected to list (the previous
    /// full listing's count minus those listed so far). `None` when unknown (a first listing, a
    /// listing of changes) or when no sync runs.
    pub remaining: Option<u64>,
}

/// A connector to add. Its `Debug` shows setting keys only: values may be secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct NewConnector {
    /// Unique name, without regard to case.
    pub name: String,
    /// The plugin's id (`folder`).
    pub plugin_id: String,
    /// The plugin's version when the connector was added.
    pub plugin_version: String,
    /// Settings, by the manifest's keys.
    pub config: BTreeMap<String, String>,
    pub grant: ConnectorGrant,
    /// The settings that are secrets (the manifest's `password` fields): sealed at rest.
    pub secret_keys: BTreeSet<String>,
}

/// The folders and hosts the user granted a connector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectorGrant {
    /// Folders, by directory field.
    pub dirs: BTreeMap<String, String>,
    /// `host` or `host:port`.
    pub hosts: Vec<String>,
}

/// Where a connector's listing of its source stands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListingState {
    /// Where the listing resumes.
    pub checkpoint: Option<String>,
    /// True when `checkpoint` continues a listing; false when the next batch starts one.
    pub more: bool,
    /// The listing generation in progress.
    pub generation: i64,
    /// When the last full listing (every document of the source) completed.
    pub last_full_ms: Option<i64>,
}

/// When a connector syncs: the syncs asked for and its own intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Schedule {
    /// When a sync was asked for, if one is pending.
    pub sync_requested_ms: Option<i64>,
    /// True when the next sync starts a full listing.
    pub full_requested: bool,
    /// How often it syncs, if set for this connector (else the plugin manifest's default).
    pub sync_interval_s: Option<i64>,
    /// How often it runs a full listing, if set for this connector (else the manifest's).
    pub full_interval_s: Option<i64>,
}

/// What a connector's plugin calls have cost since it was added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PluginUsage {
    /// Calls made.
    pub calls: u64,
    /// Calls that failed.
    pub failed_calls: u64,
    /// CPU time of the calls, in microseconds.
    pub cpu_us: u64,
    /// The most memory one instance held, in bytes.
    pub peak_memory_bytes: u64,
    /// Bytes read and written over its network connections.
    pub network_bytes: u64,
}

/// A connector. Its `Debug` shows setting keys only: values may be secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct Connector {
    /// `cn_` and random characters.
    pub id: ConnectorId,
    /// Unique name, without regard to case.
    pub name: String,
    /// The plugin's id.
    pub plugin_id: String,
    /// The plugin's version.
    pub plugin_version: String,
    /// Settings, by the manifest's keys.
    pub config: BTreeMap<String, String>,
    pub grant: ConnectorGrant,
    /// What its plugin calls have cost.
    pub usage: PluginUsage,
    /// When it was added.
    pub created_ms: i64,
    /// What it is doing.
    pub status: ConnectorStatus,
    /// When its last sync ended.
    pub last_sync_ms: Option<i64>,
    /// Why its last sync failed, if it did.
    pub last_error: Option<String>,
    /// The same, in words an integration may see (no paths, addresses or plugin output).
    pub last_error_public: Option<String>,
    /// Counts of the current or last sync.
    pub progress: SyncProgress,
    /// Documents in the catalog.
    pub doc_count: u64,
    /// Documents held back from the index (credentials, links to Quarry's own data).
    pub held_back_count: u64,
    /// What it does with credentials.
    pub credentials: CredentialPolicy,
    pub listing: ListingState,
    pub schedule: Schedule,
    /// Whether the embedding queue takes its documents before those of other connectors.
    pub embed_first: bool,
    /// On a team database, the host it lives on (its `--host-name`): a connector that reads
    /// local folders is synced and watched there only. `None`: any host.
    pub host: Option<String>,
}

/// A team host's name, trimmed: 1 to 255 characters, none a control character (as a machine's
/// host name is); [`StoreError::Invalid`] saying so otherwise.
pub fn check_host_name(name: &str) -> Result<&str, StoreError> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.len() > 255 || trimmed.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "{name:?} is not a host's name: give 1 to 255 printable characters, such as the machine's host name"
        )));
    }
    Ok(trimmed)
}

/// Which connectors a sync scheduler looks after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectorScope {
    /// Every connector (a data folder's own process).
    All,
    /// Those that live on no host in particular (a team's, on the host holding the turn).
    AnyHost,
    /// Those that live on the host named so (a team's folders, on their own host).
    LivingOn(String),
}

impl ConnectorScope {
    /// Whether `connector` is in this scope.
    pub fn contains(&self, connector: &Connector) -> bool {
        match self {
            ConnectorScope::All => true,
            ConnectorScope::AnyHost => connector.host.is_none(),
            ConnectorScope::LivingOn(name) => connector.host.as_deref() == Some(name.as_str()),
        }
    }
}

impl fmt::Debug for NewConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewConnector")
            .field("name", &self.name)
            .field("plugin_id", &self.plugin_id)
            .field("config_keys", &self.config.keys().collect::<Vec<_>>())
            .field("grant", &self.grant)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connector")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("plugin_id", &self.plugin_id)
            .field("plugin_version", &self.plugin_version)
            .field("config_keys", &self.config.keys().collect::<Vec<_>>())
            .field("grant", &self.grant)
            .field("status", &self.status)
            .field("progress", &self.progress)
            .field("doc_count", &self.doc_count)
            .field("last_error", &self.last_error)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Where a new connector lives: on a team database, one granted local folders lives on this
    /// host (the folders are this machine's); any other, and every connector of a data folder,
    /// on any host.
    fn home_of(&self, new: &NewConnector) -> Option<String> {
        (!new.grant.dirs.is_empty())
            .then(|| self.host_name.as_deref().map(str::to_owned))
            .flatten()
    }

    /// Adds a connector. Its first sync is pending. On a team database one granted local
    /// folders lives on this host ([`Connector::host`]).
    pub async fn add_connector(
        &self,
        new: &NewConnector,
        now_ms: i64,
    ) -> Result<Connector, StoreError> {
        let name = check_name(&new.name, "connector")?;
        let id = random_id("cn_")?;
        let config = self.seal_settings(&id, &new.config, &new.secret_keys)?;
        let inserted = sql(
            "INSERT INTO connectors (id, name, plugin_id, plugin_version, config, grant_dirs,
                                     grant_hosts, secret_keys, created_ms, status,
                                     sync_requested_ms, host)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'idle', ?, ?)",
        )
        .bind(&id)
        .bind(&name)
        .bind(&new.plugin_id)
        .bind(&new.plugin_version)
        .bind(to_json(&config)?)
        .bind(to_json(&new.grant.dirs)?)
        .bind(to_json(&new.grant.hosts)?)
        .bind(to_json(&new.secret_keys)?)
        .bind(now_ms)
        .bind(now_ms)
        .bind(self.home_of(new))
        .execute(&self.pool)
        .await;
        if let Err(e) = inserted {
            return Err(unique_violation(e, "connector", &name));
        }
        self.connector(&ConnectorId::parse(id).map_err(|e| StoreError::Invalid(e.to_string()))?)
            .await?
            .ok_or_else(|| StoreError::corrupt("connectors: the new connector vanished"))
    }

    /// Adds the cost of a run of plugin calls to a connector's totals (the peak is a maximum).
    pub async fn add_plugin_usage(
        &self,
        id: &ConnectorId,
        usage: &PluginUsage,
    ) -> Result<(), StoreError> {
        if usage.calls == 0 {
            return Ok(());
        }
        let _turn = self.write_turn().await;
        sql("UPDATE connectors SET plugin_calls = plugin_calls + ?1,
                    plugin_failed_calls = plugin_failed_calls + ?2,
                    plugin_cpu_us = plugin_cpu_us + ?3,
                    plugin_peak_memory_bytes = CASE WHEN plugin_peak_memory_bytes > ?4
                        THEN plugin_peak_memory_bytes ELSE ?4 END,
                    plugin_network_bytes = plugin_network_bytes + ?5
             WHERE id = ?6")
        .bind(to_i64(usage.calls))
        .bind(to_i64(usage.failed_calls))
        .bind(to_i64(usage.cpu_us))
        .bind(to_i64(usage.peak_memory_bytes))
        .bind(to_i64(usage.network_bytes))
        .bind(id.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every connector (not removed), by name.
    pub async fn connectors(&self) -> Result<Vec<Connector>, StoreError> {
        let rows = sql(select_connector!(
            "WHERE removed_ms IS NULL ORDER BY lower(name), name"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| self.connector_from_row(row))
            .collect()
    }

    /// The connector with this id, unless it does not exist or was removed.
    pub async fn connector(&self, id: &ConnectorId) -> Result<Option<Connector>, StoreError> {
        let row = sql(select_connector!("WHERE id = ? AND removed_ms IS NULL"))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref()
            .map(|row| self.connector_from_row(row))
            .transpose()
    }

    /// The connector named `name` (without regard to case); the error lists the known names.
    pub async fn connector_by_name(&self, name: &str) -> Result<Connector, StoreError> {
        let row = sql(select_connector!(
            "WHERE lower(name) = lower(?) AND removed_ms IS NULL"
        ))
        .bind(name.trim())
        .fetch_optional(&self.pool)
        .await?;
        match row {
            Some(row) => self.connector_from_row(&row),
            None => Err(StoreError::NotFound {
                what: "connector",
                name: name.to_owned(),
                known: self
                    .connectors()
                    .await?
                    .into_iter()
                    .map(|c| c.name)
                    .collect(),
            }),
        }
    }

    /// Removes a connector: it disappears from every list and search at once; its documents
    /// are purged from the index by whoever holds the index writer, then [`Store::purge_connector`]
    /// deletes its rows.
    pub async fn remove_connector(&self, name: &str, now_ms: i64) -> Result<Connector, StoreError> {
        let connector = self.connector_by_name(name).await?;
        sql("UPDATE connectors SET removed_ms = ?, sync_requested_ms = NULL WHERE id = ?")
            .bind(now_ms)
            .bind(connector.id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(connector)
    }

    /// Removed connectors whose documents may still be in the index.
    pub async fn removed_connectors(&self) -> Result<Vec<ConnectorId>, StoreError> {
        let ids: Vec<String> = scalar("SELECT id FROM connectors WHERE removed_ms IS NOT NULL")
            .fetch_all(&self.pool)
            .await?;
        Ok(ids
            .into_iter()
            .filter_map(|id| ConnectorId::parse(id).ok())
            .collect())
    }

    /// Deletes a removed connector's rows (its catalog and its place in sharing selections).
    pub async fn purge_connector(&self, id: &ConnectorId) -> Result<(), StoreError> {
        sql("DELETE FROM connectors WHERE id = ? AND removed_ms IS NOT NULL")
            .bind(id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Forgets what was indexed, for an index rebuilt from scratch: the catalog is emptied and
    /// every connector's listing starts over, with a sync requested. What OCR read is set aside
    /// (`ocr_kept`), so the rebuild does not read an unchanged scan again.
    pub async fn forget_index(&self, now_ms: i64) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        crate::ocr::set_aside(&mut tx).await?;
        sql("DELETE FROM documents").execute(&mut *tx).await?;
        sql(
            "UPDATE connectors SET checkpoint = NULL, listing_more = 0, doc_count = 0, \
             sync_requested_ms = ? WHERE removed_ms IS NULL",
        )
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Sets the team host the connector named `name` lives on (`None`: any host), and asks for
    /// a sync there.
    pub async fn set_connector_host(
        &self,
        name: &str,
        host: Option<&str>,
        now_ms: i64,
    ) -> Result<Connector, StoreError> {
        let connector = self.connector_by_name(name).await?;
        let host = host.map(check_host_name).transpose()?;
        sql("UPDATE connectors SET host = ?, sync_requested_ms = ? WHERE id = ?")
            .bind(host)
            .bind(now_ms)
            .bind(connector.id.as_str())
            .execute(&self.pool)
            .await?;
        self.connector_by_name(name).await
    }

    /// Makes the connectors that read local folders and live on no host in particular live on
    /// this host ([`Store::living_on`]): a data folder's, moved into a team database from this
    /// machine. How many.
    pub async fn home_folders_here(&self) -> Result<u64, StoreError> {
        let Some(host) = self.host_name() else {
            return Ok(0);
        };
        Ok(
            sql("UPDATE connectors SET host = ? WHERE host IS NULL AND grant_dirs <> '{}'")
                .bind(host)
                .execute(&self.pool)
                .await?,
        )
    }

    /// Asks for a sync of the connector; a running server starts it within a couple of seconds.
    pub async fn request_sync(&self, id: &ConnectorId, now_ms: i64) -> Result<(), StoreError> {
        sql("UPDATE connectors SET sync_requested_ms = ? WHERE id = ? AND removed_ms IS NULL")
            .bind(now_ms)
            .bind(id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Asks for a sync that lists the whole source again (and so removes whatever vanished
    /// without the connector reporting it).
    pub async fn request_full_sync(&self, id: &ConnectorId, now_ms: i64) -> Result<(), StoreError> {
        sql(
            "UPDATE connectors SET sync_requested_ms = ?, full_requested = 1
             WHERE id = ? AND removed_ms IS NULL",
        )
        .bind(now_ms)
        .bind(id.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Sets how often the connector syncs and runs a full listing, in seconds (`None` leaves a
    /// value as it is).
    pub async fn set_intervals(
        &self,
        name: &str,
        sync_interval_s: Option<i64>,
        full_interval_s: Option<i64>,
    ) -> Result<Connector, StoreError> {
        let connector = self.connector_by_name(name).await?;
        sql(
            "UPDATE connectors SET sync_interval_s = coalesce(?, sync_interval_s),
                                   full_interval_s = coalesce(?, full_interval_s)
             WHERE id = ?",
        )
        .bind(sync_interval_s)
        .bind(full_interval_s)
        .bind(connector.id.as_str())
        .execute(&self.pool)
        .await?;
        self.connector_by_name(name).await
    }

    /// The connectors whose documents the embedding queue takes before all others.
    pub async fn connectors_embedded_first(&self) -> Result<Vec<ConnectorId>, StoreError> {
        let ids: Vec<String> =
            scalar("SELECT id FROM connectors WHERE embed_first != 0 AND removed_ms IS NULL")
                .fetch_all(&self.pool)
                .await?;
        ids.into_iter()
            .map(|id| {
                ConnectorId::parse(id).map_err(|e| StoreError::unreadable("connectors.id", e))
            })
            .collect()
    }

    /// Puts a connector's documents before all others in the embedding queue, or back in line.
    pub async fn set_embed_first(&self, name: &str, first: bool) -> Result<Connector, StoreError> {
        let connector = self.connector_by_name(name).await?;
        sql("UPDATE connectors SET embed_first = ? WHERE id = ?")
            .bind(i64::from(first))
            .bind(connector.id.as_str())
            .execute(&self.pool)
            .await?;
        self.connector_by_name(name).await
    }

    /// Switches a connector off (not synced, not searched) or back on (a sync is requested).
    pub async fn set_disabled(
        &self,
        name: &str,
        disabled: bool,
        now_ms: i64,
    ) -> Result<Connector, StoreError> {
        let connector = self.connector_by_name(name).await?;
        let (status, requested) = if disabled {
            ("disabled", None)
        } else {
            ("idle", Some(now_ms))
        };
        sql("UPDATE connectors SET status = ?, sync_requested_ms = ? WHERE id = ?")
            .bind(status)
            .bind(requested)
            .bind(connector.id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(connector)
    }

    /// Marks the start of a sync: status `syncing`, the request taken, counts from zero unless
    /// the sync resumes a listing (then they go on from where it stopped).
    pub async fn sync_started(&self, id: &ConnectorId) -> Result<(), StoreError> {
        sql(
            "UPDATE connectors SET status = 'syncing', sync_requested_ms = NULL,
                                   listed = CASE WHEN listing_more = 1 THEN listed ELSE 0 END,
                                   indexed = CASE WHEN listing_more = 1 THEN indexed ELSE 0 END,
                                   failed = CASE WHEN listing_more = 1 THEN failed ELSE 0 END
             WHERE id = ? AND status != 'disabled'",
        )
        .bind(id.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records the counts of the sync in progress.
    pub async fn sync_progress(
        &self,
        id: &ConnectorId,
        progress: SyncProgress,
    ) -> Result<(), StoreError> {
        sql("UPDATE connectors SET listed = ?, indexed = ?, failed = ? WHERE id = ?")
            .bind(to_i64(progress.listed))
            .bind(to_i64(progress.indexed))
            .bind(to_i64(progress.failed))
            .bind(id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Marks the end of a sync: `idle`, or `error` with the reason (in full for the user, and in
    /// words an integration may see).
    pub async fn sync_finished(
        &self,
        id: &ConnectorId,
        error: Option<&SyncFailure>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (full, public) = match error {
            Some(failure) => (Some(failure.full.as_str()), Some(failure.public.as_str())),
            None => (None, None),
        };
        sql(
            "UPDATE connectors SET status = CASE WHEN status = 'disabled' THEN 'disabled'
                                               WHEN ? IS NULL THEN 'idle' ELSE 'error' END,
                                   last_error = ?, last_error_public = ?, last_sync_ms = ?
             WHERE id = ?",
        )
        .bind(full)
        .bind(full)
        .bind(public)
        .bind(now_ms)
        .bind(id.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Sets every `syncing` connector of `scope` back to `idle` with a sync requested: after a
    /// crash or a restart, their interrupted syncs resume from the stored checkpoint.
    pub async fn resume_interrupted_syncs(
        &self,
        scope: &ConnectorScope,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        let mut query = Sql::build("UPDATE connectors SET status = 'idle', sync_requested_ms = ");
        query.push_bind(now_ms);
        query.push(" WHERE status = 'syncing' AND removed_ms IS NULL");
        match scope {
            ConnectorScope::All => {}
            ConnectorScope::AnyHost => {
                query.push(" AND host IS NULL");
            }
            ConnectorScope::LivingOn(name) => {
                query.push(" AND host = ").push_bind(name.as_str());
            }
        }
        Ok(query.execute(&self.pool).await?)
    }
}

impl Store {
    /// Sets what the connector named `name` does with credentials. Documents judged under the
    /// old mode are fetched again at the next sync (all of them when the check was off), which
    /// is requested.
    pub async fn set_credential_mode(
        &self,
        name: &str,
        mode: CredentialMode,
        now_ms: i64,
    ) -> Result<Connector, StoreError> {
        let connector = self.connector_by_name(name).await?;
        if connector.credentials.mode == mode {
            return Ok(connector);
        }
        sql("UPDATE connectors SET credentials = ? WHERE id = ?")
            .bind(mode.as_str())
            .bind(connector.id.as_str())
            .execute(&self.pool)
            .await?;
        self.judge_again(
            &connector,
            connector.credentials.mode == CredentialMode::Off,
            now_ms,
        )
        .await?;
        self.connector_by_name(name).await
    }

    /// Adds (`release`) or removes a path or pattern of files the connector named `name`
    /// indexes whatever they hold. Affected documents are fetched again at the next sync, which
    /// is requested.
    pub async fn set_released(
        &self,
        name: &str,
        pattern: &str,
        release: bool,
        now_ms: i64,
    ) -> Result<Connector, StoreError> {
        let pattern = pattern.trim().trim_start_matches("./");
        if pattern.is_empty() || pattern.len() > 1024 || pattern.contains(char::is_control) {
            return Err(StoreError::Invalid(
                "a released path or pattern must be 1 to 1024 characters, without control characters"
                    .to_owned(),
            ));
        }
        let connector = self.connector_by_name(name).await?;
        let mut released = connector.credentials.released.clone();
        let known = released.iter().any(|p| p == pattern);
        match (release, known) {
            (true, false) => released.push(pattern.to_owned()),
            (false, true) => released.retain(|p| p != pattern),
            (true, true) => return Ok(connector),
            (false, false) => {
                return Err(StoreError::Invalid(format!(
                    "{pattern:?} is not released for connector {:?}; released: {}",
                    connector.name,
                    if released.is_empty() {
                        "none".to_owned()
                    } else {
                        released.join(", ")
                    }
                )));
            }
        }
        if released.len() > 1000 {
            return Err(StoreError::Invalid(
                "a connector releases at most 1000 paths or patterns; release a pattern such as `notes/**` instead"
                    .to_owned(),
            ));
        }
        sql("UPDATE connectors SET released = ? WHERE id = ?")
            .bind(to_json(&released)?)
            .bind(connector.id.as_str())
            .execute(&self.pool)
            .await?;
        // A release needs only the held-back documents again; taking one back needs every one.
        self.judge_again(&connector, !release, now_ms).await?;
        self.connector_by_name(name).await
    }

    /// Makes the next sync fetch again what a change of credential settings affects, and
    /// requests it: the held-back and redacted documents, or with `all` every document.
    async fn judge_again(
        &self,
        connector: &Connector,
        all: bool,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        if all {
            self.refetch_all(&connector.id).await?;
        } else {
            self.refetch_judged(&connector.id).await?;
        }
        self.request_sync(&connector.id, now_ms).await
    }
}

pub(crate) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A value as the JSON text a column holds.
fn to_json(value: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Invalid(e.to_string()))
}

/// Why a sync failed, twice: for the user, and for integrations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncFailure {
    /// The full reason (paths, hosts, the plugin's words), for the user.
    pub full: String,
    /// What an integration may see.
    pub public: String,
}

impl Store {
    /// The settings as stored: the values of `seal` sealed for connector `id`, the others as
    /// they are.
    fn seal_settings(
        &self,
        id: &str,
        config: &BTreeMap<String, String>,
        seal: &BTreeSet<String>,
    ) -> Result<BTreeMap<String, String>, StoreError> {
        config
            .iter()
            .map(|(key, value)| {
                let stored = if seal.contains(key) {
                    self.secrets.seal(&format!("{id}/{key}"), value)?
                } else {
                    value.clone()
                };
                Ok((key.clone(), stored))
            })
            .collect()
    }

    /// Seals the settings of connector `id` named in `secret_keys` that are stored in clear (by
    /// a Quarry from before sealing, or because the plugin's manifest now calls them secrets).
    /// Returns whether anything changed.
    pub async fn seal_secrets(
        &self,
        id: &ConnectorId,
        secret_keys: &BTreeSet<String>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let row = sql("SELECT config, secret_keys FROM connectors WHERE id = ?")
            .bind(id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            return Ok(false);
        };
        let config: BTreeMap<String, String> = from_json(&row, "config")?;
        let sealed: BTreeSet<String> = from_json(&row, "secret_keys")?;
        // The column says which values are sealed; only the others are sealed now.
        let clear: BTreeSet<String> = secret_keys.difference(&sealed).cloned().collect();
        if clear.is_empty() {
            return Ok(false);
        }
        let config = self.seal_settings(id.as_str(), &config, &clear)?;
        let all: BTreeSet<String> = sealed.union(&clear).cloned().collect();
        sql("UPDATE connectors SET config = ?, secret_keys = ? WHERE id = ?")
            .bind(to_json(&config)?)
            .bind(to_json(&all)?)
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    fn connector_from_row(&self, row: &Row) -> Result<Connector, StoreError> {
        let id: String = row.try_get("id")?;
        let config = self.open_settings(&id, row)?;
        let status = ConnectorStatus::parse(&row.try_get::<String, _>("status")?);
        Ok(Connector {
            id: ConnectorId::parse(id).map_err(|e| StoreError::unreadable("connectors.id", e))?,
            name: row.try_get("name")?,
            plugin_id: row.try_get("plugin_id")?,
            plugin_version: row.try_get("plugin_version")?,
            config,
            grant: ConnectorGrant::from_row(row)?,
            usage: PluginUsage::from_row(row)?,
            created_ms: row.try_get("created_ms")?,
            status,
            last_sync_ms: row.try_get("last_sync_ms")?,
            last_error: row.try_get("last_error")?,
            last_error_public: row.try_get("last_error_public")?,
            progress: SyncProgress::from_row(row, status)?,
            doc_count: to_u64(row.try_get("doc_count")?),
            held_back_count: to_u64(row.try_get("held_back_count")?),
            credentials: CredentialPolicy::from_row(row)?,
            listing: ListingState::from_row(row)?,
            schedule: Schedule::from_row(row)?,
            embed_first: row.flag("embed_first")?,
            host: row.try_get("host")?,
        })
    }

    /// The settings of connector `id` in `row`, its secrets opened. A secret that cannot be
    /// opened is left out (and reported once).
    fn open_settings(&self, id: &str, row: &Row) -> Result<BTreeMap<String, String>, StoreError> {
        let secret_keys: BTreeSet<String> = from_json(row, "secret_keys")?;
        let mut config: BTreeMap<String, String> = from_json(row, "config")?;
        for key in &secret_keys {
            let Some(value) = config.get_mut(key) else {
                continue;
            };
            let context = format!("{id}/{key}");
            match self.secrets.open(&context, value) {
                Ok(plain) => *value = plain,
                Err(e) => {
                    // The connector stays listed; its sessions fail naming the missing setting.
                    if self.secrets.first_report(&context) {
                        tracing::error!(connector = %id, setting = %key, "{e}");
                    }
                    config.remove(key);
                }
            }
        }
        Ok(config)
    }
}

impl ConnectorGrant {
    fn from_row(row: &Row) -> Result<ConnectorGrant, StoreError> {
        Ok(ConnectorGrant {
            dirs: from_json(row, "grant_dirs")?,
            hosts: from_json(row, "grant_hosts")?,
        })
    }
}

impl PluginUsage {
    fn from_row(row: &Row) -> Result<PluginUsage, StoreError> {
        Ok(PluginUsage {
            calls: to_u64(row.try_get("plugin_calls")?),
            failed_calls: to_u64(row.try_get("plugin_failed_calls")?),
            cpu_us: to_u64(row.try_get("plugin_cpu_us")?),
            peak_memory_bytes: to_u64(row.try_get("plugin_peak_memory_bytes")?),
            network_bytes: to_u64(row.try_get("plugin_network_bytes")?),
        })
    }
}

impl SyncProgress {
    /// The counts in `row`; `remaining` only while a sync runs.
    fn from_row(row: &Row, status: ConnectorStatus) -> Result<SyncProgress, StoreError> {
        let listed = to_u64(row.try_get("listed")?);
        let expected: Option<i64> = row.try_get("expected")?;
        Ok(SyncProgress {
            listed,
            indexed: to_u64(row.try_get("indexed")?),
            failed: to_u64(row.try_get("failed")?),
            remaining: expected
                .filter(|_| status == ConnectorStatus::Syncing)
                .map(|e| to_u64(e).saturating_sub(listed)),
        })
    }
}

impl CredentialPolicy {
    fn from_row(row: &Row) -> Result<CredentialPolicy, StoreError> {
        let mode: String = row.try_get("credentials")?;
        Ok(CredentialPolicy {
            mode: CredentialMode::parse(&mode).ok_or_else(|| {
                StoreError::corrupt(format!("connectors.credentials holds {mode:?}"))
            })?,
            released: from_json(row, "released")?,
        })
    }
}

impl ListingState {
    fn from_row(row: &Row) -> Result<ListingState, StoreError> {
        Ok(ListingState {
            checkpoint: row.try_get("checkpoint")?,
            more: row.flag("listing_more")?,
            generation: row.try_get("generation")?,
            last_full_ms: row.try_get("last_full_ms")?,
        })
    }
}

impl Schedule {
    fn from_row(row: &Row) -> Result<Schedule, StoreError> {
        Ok(Schedule {
            sync_requested_ms: row.try_get("sync_requested_ms")?,
            full_requested: row.flag("full_requested")?,
            sync_interval_s: row.try_get("sync_interval_s")?,
            full_interval_s: row.try_get("full_interval_s")?,
        })
    }
}

/// A JSON column, parsed.
fn from_json<T: serde::de::DeserializeOwned>(row: &Row, column: &str) -> Result<T, StoreError> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text)
        .map_err(|e| StoreError::unreadable(format!("connectors.{column} is not valid JSON"), e))
}
