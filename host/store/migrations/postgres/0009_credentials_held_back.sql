-- Credentials are held back before indexing. A held-back document stays in the catalog (its
-- version, so an unchanged file is not fetched again, and why it is held back, for the user) and
-- is absent from the index. A redacted one is indexed with its secrets replaced; its original
-- file is not served.
ALTER TABLE documents ADD COLUMN held_back TEXT;
ALTER TABLE documents ADD COLUMN redacted BIGINT NOT NULL DEFAULT 0;

-- What a connector does with credentials: 'hold' (the default), 'redact' or 'off'; and the
-- paths or patterns the user released (a JSON list).
ALTER TABLE connectors ADD COLUMN credentials TEXT NOT NULL DEFAULT 'hold';
ALTER TABLE connectors ADD COLUMN released TEXT NOT NULL DEFAULT '[]';

-- Facts about this data folder: its id (which names its sealing key, kept outside the folder),
-- and the version of the credential rules its index was last checked with.
CREATE TABLE data_folder (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- The admin token of the settings page, as a SHA-256 hash only (a copy of the data folder signs
-- nobody in). One row at most.
CREATE TABLE admin_token (
    id         BIGINT PRIMARY KEY CHECK (id = 1),
    token_hash BYTEA NOT NULL,
    created_ms BIGINT NOT NULL
);

-- Held-back documents are counted per connector at every listing of connectors: an index of
-- those rows alone keeps that count cheap.
CREATE INDEX documents_held_back ON documents (connector_id) WHERE held_back IS NOT NULL;
