-- Bytes a connector's plugin read and wrote over its network connections (WIT 0.5.0's
-- `network.connect`), counted with its other costs.
ALTER TABLE connectors ADD COLUMN plugin_network_bytes INTEGER NOT NULL DEFAULT 0;
