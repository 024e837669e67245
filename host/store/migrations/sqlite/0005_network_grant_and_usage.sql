-- Plugins that reach the network: the hosts the user granted a connector (JSON array of
-- `host` or `host:port`). And what a connector's plugin calls have cost since it was added.

ALTER TABLE connectors ADD COLUMN grant_hosts TEXT NOT NULL DEFAULT '[]';
ALTER TABLE connectors ADD COLUMN plugin_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE connectors ADD COLUMN plugin_failed_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE connectors ADD COLUMN plugin_cpu_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE connectors ADD COLUMN plugin_peak_memory_bytes INTEGER NOT NULL DEFAULT 0;
