-- Documents by path: a sync of changes asks whether a path that is gone held documents (a folder
-- moved away), which must not cost a scan of the catalog.
CREATE INDEX documents_path ON documents (connector_id, path);
