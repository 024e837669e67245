-- Live sync: schedules, full listings and an estimate of what a listing has left.

-- When the last full listing (one that saw every document of the source) completed.
ALTER TABLE connectors ADD COLUMN last_full_ms INTEGER;
-- The next sync starts a full listing (a user asked, or the full-pass interval came).
ALTER TABLE connectors ADD COLUMN full_requested INTEGER NOT NULL DEFAULT 0;
-- Overrides of the plugin manifest's intervals, in seconds; NULL takes the manifest's.
ALTER TABLE connectors ADD COLUMN sync_interval_s INTEGER;
ALTER TABLE connectors ADD COLUMN full_interval_s INTEGER;
-- Documents the running full listing is expected to list (the catalog's count when it
-- started), for the remaining count; NULL when unknown (a first listing, a change listing).
ALTER TABLE connectors ADD COLUMN expected INTEGER;
