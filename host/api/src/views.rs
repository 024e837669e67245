//! Every answer's shape, in one place (as meilisearch-types does): the `/api/v1` answers, the
//! admin API's, and what the CLI prints with `--json`. One type per concept, so the settings
//! page, the CLI and an integration see an integration, a connector or a document the same way;
//! where a view is wider for the user than for an integration (a connector's full failure and its
//! plugin's cost), the constructor says which, not a second type. Field order is the order of the
//! struct (it is the order of the JSON).
//!
//! `host/api/openapi.json` (served at `/api/v1/openapi.json`) describes the `/api/v1` views;
//! `tests/tests/api_openapi.rs` checks real answers against it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use quarry_core::times::rfc3339;
use quarry_core::{ConnectorId, DocId};
use quarry_index::{DocInfo, Hit, IndexError, KindProgress, SearchIndex};
use quarry_packages::Lock;
use quarry_runtime::{FieldKind, Grant, Plugin};
use quarry_store::{
    AuditEntry, Connector, Integration, IntegrationSummary, NotedDoc, Quota, Sharing,
};
use serde::{Serialize, Serializer};

use crate::error::{ApiError, Detail, MAX_DETAILS, MAX_MESSAGE_CHARS, clip, detail};

/// A document's id and metadata: the fields a search result and a document share.
#[derive(Debug, Serialize)]
pub struct DocView {
    /// The connector it came from.
    pub connector_id: String,
    /// That connector's name (search results only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connector_name: Option<String>,
    /// Its id within the connector.
    pub doc_id: String,
    /// Its title.
    pub title: String,
    /// Its path at the source, if it has one.
    pub path: Option<String>,
    /// Where it can be opened, if anywhere.
    pub url: Option<String>,
    /// Its media type.
    pub mime_type: String,
    /// The original file's size.
    pub size_bytes: u64,
    /// When it last changed (RFC 3339).
    pub update_time: String,
}

impl DocView {
    /// The fields of `info`; `connector_name` for search results.
    pub fn new(info: &DocInfo, connector_name: Option<String>) -> DocView {
        let meta = &info.meta;
        DocView {
            connector_id: info.connector.to_string(),
            connector_name,
            doc_id: info.doc_id.to_string(),
            title: meta.title.clone(),
            path: meta.path.clone(),
            url: meta.url.clone(),
            mime_type: meta.mime_type.clone(),
            size_bytes: meta.size_bytes,
            update_time: rfc3339(meta.update_time_ms),
        }
    }
}

/// One search result.
#[derive(Debug, Serialize)]
pub struct HitView {
    /// The document.
    #[serde(flatten)]
    pub doc: DocView,
    /// Its relevance, to four decimals.
    pub score: f64,
    /// The passage that best matches the query.
    pub snippet: String,
    /// Where the query's words are in the snippet (character offsets).
    pub highlights: Vec<Highlight>,
    /// The page (1-based) the snippet's passage lies on, to read with `page_start`/`page_end`;
    /// `None` for documents without pages.
    pub page: Option<u64>,
    /// The document view of Quarry's search page at that page, the query's words highlighted
    /// (a person signed in to the settings page opens it; it carries no key).
    pub link: String,
}

/// A highlighted span of a snippet, `start..end` in characters.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Highlight {
    /// First character.
    pub start: usize,
    /// One past the last character.
    pub end: usize,
}

impl HitView {
    /// The results of a search for `query`; `connectors` gives their connectors' names, and
    /// `base_url` the address their links start with.
    pub fn list(
        hits: Vec<Hit>,
        connectors: &[Connector],
        base_url: &str,
        query: &str,
    ) -> Vec<HitView> {
        hits.into_iter()
            .map(|hit| {
                let name = connectors
                    .iter()
                    .find(|c| c.id == hit.info.connector)
                    .map(|c| c.name.clone())
                    .unwrap_or_default();
                HitView {
                    doc: DocView::new(&hit.info, Some(name)),
                    // Four decimals, without f32 noise.
                    score: (f64::from(hit.score) * 10_000.0).round() / 10_000.0,
                    highlights: hit
                        .snippet
                        .highlights
                        .iter()
                        .map(|&(start, end)| Highlight { start, end })
                        .collect(),
                    snippet: hit.snippet.text,
                    link: document_link(
                        base_url,
                        &hit.info.connector,
                        &hit.info.doc_id,
                        hit.page,
                        query,
                    ),
                    page: hit.page,
                }
            })
            .collect()
    }
}

/// The address of a document's view on the search page (`/search/docs/{connector}/{doc}`), at
/// `page` when it has pages, with `query` to highlight. Ids are URL-safe by construction.
pub fn document_link(
    base_url: &str,
    connector: &ConnectorId,
    doc: &DocId,
    page: Option<u64>,
    query: &str,
) -> String {
    let mut params = form_urlencoded::Serializer::new(String::new());
    if !query.is_empty() {
        params.append_pair("q", query);
    }
    if let Some(page) = page {
        params.append_pair("page", &page.to_string());
    }
    let params = params.finish();
    let base = base_url.trim_end_matches('/');
    if params.is_empty() {
        format!("{base}/search/docs/{connector}/{doc}")
    } else {
        format!("{base}/search/docs/{connector}/{doc}?{params}")
    }
}

/// A page preview as JSON (`GET .../pages/{page}/preview` with `Accept: application/json`).
#[derive(Debug, Serialize)]
pub struct PreviewView {
    /// The connector.
    pub connector_id: String,
    /// The document.
    pub doc_id: String,
    /// The page drawn (1-based).
    pub page: u32,
    /// The document's pages (1 for an image).
    pub page_count: u32,
    /// The image's width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// Its type: `image/png`.
    pub mime_type: &'static str,
    /// The image, base64.
    pub image: String,
    /// Where the words of `q` are on the image, in its pixels (empty without `q`).
    pub highlights: Vec<BoxView>,
}

/// A box on a preview image, in pixels from its top-left corner.
#[derive(Debug, Serialize)]
pub struct BoxView {
    /// Left.
    pub x: u32,
    /// Top.
    pub y: u32,
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
}

/// The answer of `POST /api/v1/search`.
#[derive(Debug, Serialize)]
pub struct SearchAnswer {
    /// The page of results.
    pub results: Vec<HitView>,
    /// How many documents match in all.
    pub total: u64,
    /// `keyword` or `semantic`: what ranking ran.
    pub mode: &'static str,
    /// How long the search took.
    pub took_ms: u64,
    /// What the caller should know (a fallback to keyword search, a query simplified).
    pub warnings: Vec<String>,
}

/// The answer of `GET /api/v1/connectors/{connector_id}/docs/{doc_id}`.
#[derive(Debug, Serialize)]
pub struct DocumentView {
    /// The document.
    #[serde(flatten)]
    pub doc: DocView,
    /// The text of the pages asked for, cut to `max_chars`.
    pub content: String,
    /// What the source says about it beyond the common fields.
    pub metadata: BTreeMap<String, String>,
    /// Its pages in all.
    pub page_count: u64,
    /// The first page in `content`.
    pub page_start: u64,
    /// The last page in `content`.
    pub page_end: u64,
    /// Characters of the pages asked for, before cutting.
    pub total_chars: u64,
    /// True when `content` was cut to `max_chars`.
    pub truncated: bool,
    /// Whether `GET .../file` serves its original file.
    pub file: FileView,
}

/// Whether a document's original file is served, and if not, why (in words for an integration:
/// not judged yet, could not be judged, redacted). A file served is the file that was judged:
/// one changed since is refused until a sync judges it again.
#[derive(Debug, Clone, Serialize)]
pub struct FileView {
    /// True when `GET .../file` serves it.
    pub served: bool,
    /// Why it is not served; `null` when it is.
    pub reason: Option<&'static str>,
}

impl FileView {
    /// What `serving` says of a download.
    pub fn new(serving: &quarry_sync::Serving) -> FileView {
        match serving {
            quarry_sync::Serving::Refused(why) => FileView {
                served: false,
                reason: Some(why),
            },
            _ => FileView {
                served: true,
                reason: None,
            },
        }
    }
}

/// A connector. Integrations see [`ConnectorView::public`]; the user (settings page, CLI) sees
/// [`ConnectorView::for_user`], with the full reason of a failure and its plugin's cost.
#[derive(Debug, Serialize)]
pub struct ConnectorView {
    /// Its id.
    pub connector_id: String,
    /// Its name.
    pub name: String,
    /// `plugin-id@version`.
    pub plugin: String,
    /// `idle`, `syncing`, `error` or `disabled`.
    pub status: &'static str,
    /// Documents in its catalog (those held back included).
    pub doc_count: u64,
    /// Documents held back from the index (credentials, links to Quarry's own data): how many
    /// only; which and why is the user's to see.
    pub held_back_count: u64,
    /// When its last sync ended (RFC 3339).
    pub last_sync_time: Option<String>,
    /// Why its last sync failed: the kind of failure for integrations, in full for the user.
    pub last_error: Option<String>,
    /// Counts of the current or last sync.
    pub progress: ProgressView,
    /// How far its documents' embeddings are (for semantic search); `null` when no embedding
    /// model is loaded (or the answer does not come from the server).
    pub embedding: Option<EmbeddingView>,
    /// How far the reading of its images and scanned pages is; `null` when OCR is off (no
    /// models, or a plugin that does not read scans) or the answer does not come from the
    /// server.
    pub ocr: Option<OcrView>,
    /// What its plugin calls have cost (the user's view only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin_usage: Option<PluginUsageView>,
    /// What it does with credentials (the user's view only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credentials: Option<CredentialsView>,
}

/// A connector's choices about credentials, for its user.
#[derive(Debug, Serialize)]
pub struct CredentialsView {
    /// `hold` (the default), `redact` or `off`.
    pub mode: &'static str,
    /// Paths and patterns indexed whatever they hold.
    pub released: Vec<String>,
}

/// Counts of a sync.
#[derive(Debug, Serialize)]
pub struct ProgressView {
    /// Documents listed.
    pub listed: u64,
    /// Documents indexed.
    pub indexed: u64,
    /// Documents without extracted text.
    pub failed: u64,
    /// Documents a full listing still expects, when known.
    pub remaining: Option<u64>,
}

/// How far a connector's embeddings are: documents are searchable by keyword once synced, and
/// by meaning once their vectors, computed in the background, are stored.
#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingView {
    /// The model the vectors come from.
    pub model: String,
    /// Documents whose vectors are still being computed.
    pub pending: u64,
}

impl EmbeddingView {
    /// The progress of each of `connectors`, in order: their documents in `index` that lack
    /// vectors of `model`.
    pub fn counted(
        index: &SearchIndex,
        model: &str,
        connectors: &[ConnectorId],
    ) -> Result<Vec<EmbeddingView>, IndexError> {
        connectors
            .iter()
            .map(|id| {
                Ok(EmbeddingView {
                    model: model.to_owned(),
                    pending: index.pending_count(model, Some(id))?,
                })
            })
            .collect()
    }
}

/// How far OCR is with a connector's documents: text that exists is searchable at once, and
/// the text of images and scanned pages once OCR, in the background, has read them.
#[derive(Debug, Clone, Serialize)]
pub struct OcrView {
    /// Documents whose images or scanned pages are still to be read.
    pub pending: u64,
}

/// What a connector's plugin calls have cost since it was added.
#[derive(Debug, Serialize)]
pub struct PluginUsageView {
    /// Calls made.
    pub calls: u64,
    /// Calls that failed.
    pub failed_calls: u64,
    /// CPU time, in milliseconds.
    pub cpu_ms: u64,
    /// The most memory one instance held.
    pub peak_memory_bytes: u64,
    /// Bytes read and written over its network connections.
    pub network_bytes: u64,
}

impl ConnectorView {
    /// A connector as integrations see it: `last_error` names the kind of failure, without host
    /// paths, addresses or the plugin's words.
    pub fn public(c: &Connector) -> ConnectorView {
        ConnectorView {
            connector_id: c.id.to_string(),
            name: c.name.clone(),
            plugin: format!("{}@{}", c.plugin_id, c.plugin_version),
            status: c.status.as_str(),
            doc_count: c.doc_count,
            held_back_count: c.held_back_count,
            last_sync_time: c.last_sync_ms.map(rfc3339),
            // A failure recorded before failures had public words is named without detail.
            last_error: c.last_error_public.clone().or_else(|| {
                c.last_error
                    .as_ref()
                    .map(|_| "the last sync failed".to_owned())
            }),
            progress: ProgressView {
                listed: c.progress.listed,
                indexed: c.progress.indexed,
                failed: c.progress.failed,
                remaining: c.progress.remaining,
            },
            embedding: None,
            ocr: None,
            plugin_usage: None,
            credentials: None,
        }
    }

    /// A connector as its user sees it: the full reason of a failure and its plugin's cost.
    pub fn for_user(c: &Connector) -> ConnectorView {
        ConnectorView {
            last_error: c.last_error.clone(),
            plugin_usage: Some(PluginUsageView {
                calls: c.usage.calls,
                failed_calls: c.usage.failed_calls,
                cpu_ms: c.usage.cpu_us / 1000,
                peak_memory_bytes: c.usage.peak_memory_bytes,
                network_bytes: c.usage.network_bytes,
            }),
            credentials: Some(CredentialsView {
                mode: c.credentials.mode.as_str(),
                released: c.credentials.released.clone(),
            }),
            ..ConnectorView::public(c)
        }
    }
}

/// The answer of `GET /api/v1/connectors`.
#[derive(Debug, Serialize)]
pub struct ConnectorList {
    /// The connectors the caller may see.
    pub connectors: Vec<ConnectorView>,
}

/// A monthly quota: a number of requests, or `"unlimited"`.
#[derive(Debug, Clone, Copy)]
pub struct QuotaView(pub Quota);

impl Serialize for QuotaView {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Quota::Limited(n) => serializer.serialize_u64(n),
            Quota::Unlimited => serializer.serialize_str("unlimited"),
        }
    }
}

/// What an integration may see: `{mode: "all" | "declined"}` or `{mode: "selected", connectors}`.
#[derive(Debug, Serialize)]
pub struct SharingView {
    /// `all`, `selected` or `declined`.
    pub mode: &'static str,
    /// The selected connectors that still exist (mode `selected` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connectors: Option<Vec<NamedConnector>>,
}

/// A connector by id and name.
#[derive(Debug, Serialize)]
pub struct NamedConnector {
    /// Its id.
    pub connector_id: String,
    /// Its name.
    pub name: String,
}

impl NamedConnector {
    /// The id and name of `c`.
    pub fn of(c: &Connector) -> NamedConnector {
        NamedConnector {
            connector_id: c.id.to_string(),
            name: c.name.clone(),
        }
    }
}

impl SharingView {
    /// `sharing`, naming the selected connectors found in `connectors`.
    pub fn new(sharing: &Sharing, connectors: &[Connector]) -> SharingView {
        match sharing {
            Sharing::All => SharingView {
                mode: "all",
                connectors: None,
            },
            Sharing::Declined => SharingView {
                mode: "declined",
                connectors: None,
            },
            Sharing::Selected(ids) => SharingView {
                mode: "selected",
                connectors: Some(
                    connectors
                        .iter()
                        .filter(|c| ids.contains(&c.id))
                        .map(NamedConnector::of)
                        .collect(),
                ),
            },
        }
    }
}

/// An integration.
#[derive(Debug, Serialize)]
pub struct IntegrationView {
    /// Its id.
    pub integration_id: String,
    /// Its name.
    pub name: String,
    /// When it was created (RFC 3339).
    pub created: String,
    /// `free`, `custom` or `unlimited`.
    pub plan: String,
    /// Requests per month.
    pub monthly_quota: QuotaView,
    /// What it may see.
    pub sharing: SharingView,
}

impl IntegrationView {
    /// `i`; `connectors` names the ones it was shared.
    pub fn new(i: &Integration, connectors: &[Connector]) -> IntegrationView {
        IntegrationView {
            integration_id: i.id.clone(),
            name: i.name.clone(),
            created: rfc3339(i.created_ms),
            plan: i.plan.clone(),
            monthly_quota: QuotaView(i.quota),
            sharing: SharingView::new(&i.sharing, connectors),
        }
    }
}

/// An integration with how it is used (the settings page's list, `quarry integration list`).
#[derive(Debug, Serialize)]
pub struct IntegrationSummaryView {
    /// The integration.
    #[serde(flatten)]
    pub integration: IntegrationView,
    /// Requests this UTC month.
    pub requests_this_month: u64,
    /// When one of its keys was last used (RFC 3339).
    pub last_used: Option<String>,
    /// Keys neither revoked nor expired.
    pub active_keys: u32,
}

impl IntegrationSummaryView {
    /// `s`; `connectors` names the ones it was shared.
    pub fn new(s: &IntegrationSummary, connectors: &[Connector]) -> IntegrationSummaryView {
        IntegrationSummaryView {
            integration: IntegrationView::new(&s.integration, connectors),
            requests_this_month: s.requests_this_month,
            last_used: s.last_used_ms.map(rfc3339),
            active_keys: s.active_keys,
        }
    }
}

/// The one answer that carries a key (creating an integration, rotating its key): shown once.
#[derive(Debug, Serialize)]
pub struct KeyAnswer {
    /// The integration.
    pub integration: IntegrationView,
    /// The key.
    pub api_key: String,
    /// The integration's generated API documentation, with the key in it.
    pub docs: String,
    /// The MCP client configuration (`{"mcpServers": {"quarry": ...}}`) over HTTP, with the key.
    pub mcp_config: serde_json::Value,
}

/// A request in the audit log. Names are those of the integration and connector now (`None`
/// when removed since).
#[derive(Debug, Serialize)]
pub struct AuditEntryView {
    /// When it was answered (RFC 3339).
    pub time: String,
    /// Its `X-Request-Id`.
    pub request_id: String,
    /// The integration that made it.
    pub integration_id: String,
    /// That integration's name.
    pub integration: Option<String>,
    /// Method and route.
    pub endpoint: String,
    /// The connector read.
    pub connector_id: Option<String>,
    /// That connector's name.
    pub connector: Option<String>,
    /// The document read.
    pub doc_id: Option<String>,
    /// Bytes of the answer's body.
    pub bytes: u64,
    /// The answer's status.
    pub status: u16,
}

impl AuditEntryView {
    /// `e`, naming its integration and connector from these lists.
    pub fn new(
        e: &AuditEntry,
        integrations: &[IntegrationSummary],
        connectors: &[Connector],
    ) -> AuditEntryView {
        let integration = integrations
            .iter()
            .find(|s| s.integration.id == e.integration_id)
            .map(|s| s.integration.name.clone())
            .or_else(|| (e.integration_id == crate::audit::USER).then(|| "You".to_owned()));
        let connector = e.connector_id.as_deref().and_then(|id| {
            connectors
                .iter()
                .find(|c| c.id.as_str() == id)
                .map(|c| c.name.clone())
        });
        AuditEntryView {
            time: rfc3339(e.time_ms),
            request_id: e.request_id.clone(),
            integration_id: e.integration_id.clone(),
            integration,
            endpoint: e.endpoint.clone(),
            connector_id: e.connector_id.clone(),
            connector,
            doc_id: e.doc_id.clone(),
            bytes: e.bytes,
            status: e.status,
        }
    }
}

/// The body of every error answer: `{"error": {...}}`.
#[derive(Debug, Serialize)]
pub struct ErrorEnvelope {
    /// The error.
    pub error: ErrorBody,
}

impl ErrorEnvelope {
    /// The body of an answer of `error` to request `request_id`. Whatever built the error, the
    /// answer stays small: the message and each detail are cut to a readable length and at most
    /// [`MAX_DETAILS`] details are listed.
    pub fn of(error: &ApiError, request_id: &str) -> ErrorEnvelope {
        ErrorEnvelope {
            error: ErrorBody {
                code: error.kind.code().as_str(),
                message: clip(&error.message, MAX_MESSAGE_CHARS),
                request_id: request_id.to_owned(),
                details: error
                    .details
                    .iter()
                    .take(MAX_DETAILS)
                    .map(|d| detail(&d.field, &d.issue))
                    .collect(),
            },
        }
    }
}

/// An error: its code, a message for people, the request's id and, for validation errors, each
/// problem found.
#[derive(Debug, Serialize)]
pub struct ErrorBody {
    /// One of the contract's codes.
    pub code: &'static str,
    /// What went wrong and how to fix it.
    pub message: String,
    /// The request's id, as in `X-Request-Id`.
    pub request_id: String,
    /// Each problem found (validation errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Detail>,
}

/// A connector in the settings page: [`ConnectorView::for_user`], its settings (never
/// passwords), what it was granted, and Quarry's own folders the grant leaves out.
#[derive(Debug, Serialize)]
pub struct AdminConnectorView {
    /// The connector, as its user sees it.
    #[serde(flatten)]
    pub connector: ConnectorView,
    /// Its settings, by key, passwords left out.
    pub settings: BTreeMap<String, String>,
    /// Folders it may read.
    pub granted_folders: Vec<String>,
    /// Hosts it may reach (`host:port, unencrypted (you allowed it)` for a server the user
    /// consented to reach in clear).
    pub granted_hosts: Vec<String>,
    /// Quarry's own folders inside the granted ones, which it may not read.
    pub left_out: Vec<PathBuf>,
    /// Its plugin's name, when installed.
    pub plugin_name: Option<String>,
    /// When it was added (RFC 3339).
    pub created: String,
}

impl AdminConnectorView {
    /// `c` as the settings page shows it; `plugin` is its installed plugin, `left_out` Quarry's
    /// own folders inside its grant.
    pub fn new(c: &Connector, plugin: Option<&Plugin>, left_out: Vec<PathBuf>) -> Self {
        let manifest = plugin.map(Plugin::manifest);
        let shown = |key: &str| {
            manifest
                .and_then(|m| m.field(key))
                .is_some_and(|f| f.kind != FieldKind::Password)
        };
        AdminConnectorView {
            connector: ConnectorView::for_user(c),
            settings: c
                .config
                .iter()
                .filter(|(key, _)| shown(key))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            granted_folders: c.grant.dirs.values().cloned().collect(),
            granted_hosts: c
                .grant
                .hosts
                .iter()
                .map(|h| match Grant::in_clear(h) {
                    Some(clear) => format!("{clear}, unencrypted (you allowed it)"),
                    None => h.clone(),
                })
                .collect(),
            left_out,
            plugin_name: manifest.map(|m| m.name.clone()),
            created: rfc3339(c.created_ms),
        }
    }
}

/// An installed plugin: what it is, its settings, what it asks for.
#[derive(Debug, Serialize)]
pub struct PluginView {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The WIT version it was built against.
    pub wit: String,
    /// What it connects to.
    pub description: String,
    /// The settings a connector of it takes.
    pub settings: Vec<SettingView>,
    /// What it asks for (folders, hosts), in words.
    pub capabilities: Vec<String>,
    /// The folder it is installed in (the CLI's view only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// Where it came from and how it was verified (of an installed plugin).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<OriginView>,
}

/// Where a plugin came from (`plugins.lock`).
#[derive(Debug, Serialize)]
pub struct OriginView {
    /// The folder, file, address or OCI reference it was installed from; `bundled` for one
    /// that comes with Quarry, `unknown` for one installed before Quarry kept a lock.
    pub source: String,
    /// How it was verified: `sha256-pin`, `trusted-signature`, `oci-digest`, `index-digest`,
    /// `local-source`, `upload`; `bundled` or `unknown` as for `source`.
    pub verification: String,
    /// That, in words.
    pub verified: String,
    /// The digest checked.
    pub digest: Option<String>,
    /// The key that signed it, when a trusted one did.
    pub signed_by: Option<String>,
    /// When it was installed (RFC 3339).
    pub installed_at: Option<String>,
}

impl OriginView {
    /// The origin of `plugin`: its entry in `lock` when it is installed in `installed`.
    pub fn of(plugin: &Plugin, lock: &Lock, installed: &std::path::Path) -> OriginView {
        let in_data_folder = plugin.dir().parent() == Some(installed);
        match lock.get(plugin.id()).filter(|_| in_data_folder) {
            Some(entry) => OriginView {
                source: entry.source.clone(),
                verification: serde_json::to_value(&entry.verification)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                verified: entry.verification.describe().to_owned(),
                digest: Some(entry.digest.clone()),
                signed_by: entry.signed_by.clone(),
                installed_at: Some(entry.installed_at.clone()),
            },
            None => {
                let (source, verified) = if in_data_folder {
                    (
                        "unknown",
                        "not recorded: installed before Quarry kept a lock",
                    )
                } else {
                    ("bundled", "comes with Quarry")
                };
                OriginView {
                    source: source.to_owned(),
                    verification: source.to_owned(),
                    verified: verified.to_owned(),
                    digest: None,
                    signed_by: None,
                    installed_at: None,
                }
            }
        }
    }
}

/// One setting of a plugin.
#[derive(Debug, Serialize)]
pub struct SettingView {
    /// Its key.
    pub key: String,
    /// Its label.
    pub label: String,
    /// `text`, `password`, `number`, `bool`, `directory`, `url`, `certificate` or
    /// `plaintext-consent`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// For a `url` setting, the schemes it takes (`https`, `imaps`...); empty for others.
    pub schemes: Vec<String>,
    /// Whether a connector must set it.
    pub required: bool,
    /// Its default.
    pub default: Option<String>,
    /// What it means.
    pub description: String,
}

impl PluginView {
    /// `plugin`, as the settings page shows it.
    pub fn new(plugin: &Plugin) -> PluginView {
        let m = plugin.manifest();
        PluginView {
            id: m.id.to_string(),
            name: m.name.clone(),
            version: m.version.clone(),
            wit: m.wit.clone(),
            description: m.description.clone(),
            settings: m
                .config
                .iter()
                .map(|f| SettingView {
                    key: f.key.clone(),
                    label: f.label.clone(),
                    kind: match f.kind {
                        FieldKind::Text => "text",
                        FieldKind::Password => "password",
                        FieldKind::Number => "number",
                        FieldKind::Bool => "bool",
                        FieldKind::Directory => "directory",
                        FieldKind::Url => "url",
                        FieldKind::Certificate => "certificate",
                        FieldKind::PlaintextConsent => "plaintext-consent",
                    },
                    schemes: if f.kind == FieldKind::Url {
                        f.schemes()
                    } else {
                        Vec::new()
                    },
                    required: f.required,
                    default: f.default.clone(),
                    description: f.description.clone(),
                })
                .collect(),
            capabilities: plugin.requested_capabilities(),
            folder: None,
            origin: None,
        }
    }

    /// `plugin` with where it came from, by `lock` (the data folder's, of the plugins
    /// installed in `installed`).
    pub fn with_origin(
        mut self,
        plugin: &Plugin,
        lock: &Lock,
        installed: &std::path::Path,
    ) -> Self {
        self.origin = Some(OriginView::of(plugin, lock, installed));
        self
    }

    /// `plugin` with the folder it is installed in (the CLI's `plugin list --json`).
    pub fn with_folder(plugin: &Plugin) -> PluginView {
        PluginView {
            folder: Some(plugin.dir().display().to_string()),
            ..PluginView::new(plugin)
        }
    }
}

/// A connector's state for its user (`quarry connector status --json`): the user's view, when
/// its last full listing ended, and the documents whose text could not be extracted.
#[derive(Debug, Serialize)]
pub struct ConnectorStatusView {
    /// The connector, as its user sees it.
    #[serde(flatten)]
    pub connector: ConnectorView,
    /// When its last full listing ended (RFC 3339).
    pub last_full_sync_time: Option<String>,
    /// Documents whose text could not be extracted: found by title and path only.
    pub failed_documents: Vec<FailedDocView>,
    /// Documents that have no text layer (scanned PDFs, images): found by title and path only.
    pub no_text_layer: NotedDocsView,
    /// Documents held back from the index, with why.
    pub held_back: NotedDocsView,
    /// Documents whose original file could not be judged for credentials, with why: their
    /// files are not served until the user releases them.
    pub unjudged_files: NotedDocsView,
    /// Documents indexed with their secrets redacted (their files are not served).
    pub redacted_count: u64,
    /// Whether the embedding queue takes this connector's documents before all others.
    pub embed_first: bool,
    /// How far its vectors are, per kind of document; `None` without a model.
    pub embedding_by_kind: Option<Vec<EmbeddingKindView>>,
}

/// How far the vectors of one kind of a connector's documents are. The embedding queue takes
/// prose first, then other documents, code, data and logs (docs/embedding.md).
#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingKindView {
    /// `prose`, `other`, `code`, `data` or `logs`.
    pub kind: &'static str,
    /// The connector's documents of this kind.
    pub documents: u64,
    /// Those whose every passage has its vector.
    pub embedded: u64,
    /// Those whose first passages alone have theirs: found by meaning already, the rest of
    /// their text to follow.
    pub first_passages: u64,
}

impl EmbeddingKindView {
    /// The view of `progress`.
    pub fn new(progress: &KindProgress) -> EmbeddingKindView {
        EmbeddingKindView {
            kind: progress.kind.name(),
            documents: progress.documents,
            embedded: progress.embedded,
            first_passages: progress.first_passages,
        }
    }
}

/// Documents with a word for their user (held back, without a text layer, with a file that
/// could not be judged): how many, and the first of them with why.
#[derive(Debug, Serialize)]
pub struct NotedDocsView {
    /// How many the connector has.
    pub count: u64,
    /// The first of them, by path.
    pub documents: Vec<NotedDocView>,
}

/// A document with a word for its user: why it has no text layer, why it is held back, or why
/// its file could not be judged.
#[derive(Debug, Serialize)]
pub struct NotedDocView {
    /// Its id.
    pub doc_id: String,
    /// Its path.
    pub path: String,
    /// Why it has no text, or is held back.
    pub reason: String,
}

impl NotedDocView {
    /// `d`.
    pub fn new(d: &NotedDoc) -> NotedDocView {
        NotedDocView {
            doc_id: d.doc_id.to_string(),
            path: d.path.clone(),
            reason: d.note.clone(),
        }
    }
}

/// A document whose text could not be extracted.
#[derive(Debug, Serialize)]
pub struct FailedDocView {
    /// Its id.
    pub doc_id: String,
    /// Its path.
    pub path: String,
    /// Why.
    pub error: String,
}

impl FailedDocView {
    /// `f`.
    pub fn new(f: &NotedDoc) -> FailedDocView {
        FailedDocView {
            doc_id: f.doc_id.to_string(),
            path: f.path.clone(),
            error: f.note.clone(),
        }
    }
}
