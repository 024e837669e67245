-- A document's original file is served only as the bytes that were judged for credentials.
-- `original`: the fingerprint of the file judged clear ('<size> <sha256 hex>'), or 'unchecked'
-- when it was not judged because the connector's check is off or the user released its path.
-- `unjudged`: why it could not be judged (too slow to check, unreadable, changed meanwhile);
-- it is then not served until the user releases it. Both NULL: not judged yet (a document an
-- older Quarry indexed, or one a sync is writing); not served until the background judge
-- has read it.
ALTER TABLE documents ADD COLUMN original TEXT;
ALTER TABLE documents ADD COLUMN unjudged TEXT;

-- The background judge looks for documents whose original was never judged, newest first.
CREATE INDEX documents_original_pending ON documents (update_time_ms)
    WHERE original IS NULL AND unjudged IS NULL AND held_back IS NULL AND redacted = 0
      AND version != '';
CREATE INDEX documents_unjudged ON documents (connector_id) WHERE unjudged IS NOT NULL;
