-- Quarry's store, version 1. Times are milliseconds since the Unix epoch (UTC).

-- An integration: one agent, script or app that uses the API with its own key.
CREATE TABLE integrations (
    id            TEXT PRIMARY KEY,                 -- in_<random>
    name          TEXT NOT NULL COLLATE NOCASE UNIQUE,
    created_ms    INTEGER NOT NULL,
    plan          TEXT NOT NULL CHECK (plan IN ('free', 'custom', 'unlimited')),
    monthly_quota INTEGER CHECK (monthly_quota IS NULL OR monthly_quota >= 0), -- NULL: unlimited
    sharing       TEXT NOT NULL CHECK (sharing IN ('all', 'selected', 'declined'))
);

-- API keys: only a hash is kept. `lookup` is a non-secret prefix of the key, to find its row.
CREATE TABLE api_keys (
    lookup         TEXT PRIMARY KEY,
    integration_id TEXT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    hash           BLOB NOT NULL,                   -- SHA-256 of the whole key
    created_ms     INTEGER NOT NULL,
    expires_ms     INTEGER,
    revoked_ms     INTEGER,
    last_used_ms   INTEGER
);
CREATE INDEX api_keys_integration ON api_keys (integration_id);

-- Requests per integration per UTC calendar month ('2026-11').
CREATE TABLE usage (
    integration_id TEXT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    month          TEXT NOT NULL,
    requests       INTEGER NOT NULL,
    PRIMARY KEY (integration_id, month)
) WITHOUT ROWID;

-- Connectors: a plugin with its settings and the user's grant.
CREATE TABLE connectors (
    id                TEXT PRIMARY KEY,             -- cn_<random>
    name              TEXT NOT NULL COLLATE NOCASE,
    plugin_id         TEXT NOT NULL,
    plugin_version    TEXT NOT NULL,
    config            TEXT NOT NULL,                -- JSON object of strings
    grant_dirs        TEXT NOT NULL,                -- JSON object: directory field -> host folder
    created_ms        INTEGER NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('idle', 'syncing', 'error', 'disabled')),
    last_sync_ms      INTEGER,
    last_error        TEXT,
    sync_requested_ms INTEGER,                      -- a sync was asked for (CLI, settings)
    removed_ms        INTEGER,                      -- removed; its documents are being purged
    -- Resumable listing: the checkpoint to pass next, and the generation of the listing in
    -- progress (documents listed by it carry it; a full listing removes the others).
    checkpoint        TEXT,
    listing_more      INTEGER NOT NULL DEFAULT 0,   -- the checkpoint continues a listing
    generation        INTEGER NOT NULL DEFAULT 0,
    doc_count         INTEGER NOT NULL DEFAULT 0,   -- rows in documents, kept by each commit
    -- Progress of the sync in progress (or the last one).
    listed            INTEGER NOT NULL DEFAULT 0,
    indexed           INTEGER NOT NULL DEFAULT 0,
    failed            INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX connectors_live_name ON connectors (name) WHERE removed_ms IS NULL;

-- Connectors an integration may see when its sharing is 'selected'.
CREATE TABLE integration_connectors (
    integration_id TEXT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    connector_id   TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    PRIMARY KEY (integration_id, connector_id)
) WITHOUT ROWID;

-- The document catalog: what each connector listed, for change detection and downloads.
CREATE TABLE documents (
    connector_id   TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    doc_id         TEXT NOT NULL,
    locator        TEXT NOT NULL,
    version        TEXT NOT NULL,                   -- '' when the text must be fetched again
    title          TEXT NOT NULL,
    path           TEXT,
    url            TEXT,
    mime_type      TEXT NOT NULL,
    size_bytes     INTEGER NOT NULL,
    update_time_ms INTEGER NOT NULL,
    has_text       INTEGER NOT NULL,
    generation     INTEGER NOT NULL,                -- the listing that last saw it
    indexed_ms     INTEGER NOT NULL,
    error          TEXT,                            -- why its text could not be extracted
    PRIMARY KEY (connector_id, doc_id)
) WITHOUT ROWID;
CREATE INDEX documents_generation ON documents (connector_id, generation);

-- Who read what: one row per authenticated API request.
CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY,
    time_ms        INTEGER NOT NULL,
    request_id     TEXT NOT NULL,
    integration_id TEXT NOT NULL,
    endpoint       TEXT NOT NULL,
    connector_id   TEXT,
    doc_id         TEXT,
    bytes          INTEGER NOT NULL,
    status         INTEGER NOT NULL
);
CREATE INDEX audit_log_time ON audit_log (time_ms);
CREATE INDEX audit_log_integration ON audit_log (integration_id, time_ms);
