-- Password settings are sealed with the key in secret.key (beside the database, never in it):
-- `secret_keys` lists the settings of `config` that hold sealed values (JSON array).
ALTER TABLE connectors ADD COLUMN secret_keys TEXT NOT NULL DEFAULT '[]';
-- Why the last sync failed, in words an integration may see: no host paths, addresses or plugin
-- output (`last_error` keeps the full reason, for the user).
ALTER TABLE connectors ADD COLUMN last_error_public TEXT;
-- Counters kept across restarts: audit entries that could not be written.
CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
