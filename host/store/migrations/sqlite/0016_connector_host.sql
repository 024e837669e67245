-- On a team database, the host a connector lives on: one that reads local folders is synced
-- and watched by the host that added it (its name, `--host-name`); NULL for any host.
ALTER TABLE connectors ADD COLUMN host TEXT;
