-- The settings page: sessions of the person at the keyboard, and one-time login links.
-- Only SHA-256 hashes of the secrets are stored (a copy of the database logs nobody in).

CREATE TABLE admin_sessions (
    secret_hash BLOB PRIMARY KEY,
    -- Sent back by the page with every change (CSRF); not a secret from the page itself.
    csrf TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE admin_login_links (
    code_hash BLOB PRIMARY KEY,
    expires_ms INTEGER NOT NULL
) WITHOUT ROWID;
