-- Connectors whose documents the embedding queue takes before all others (`quarry connector
-- embed-first`).
ALTER TABLE connectors ADD COLUMN embed_first INTEGER NOT NULL DEFAULT 0;
