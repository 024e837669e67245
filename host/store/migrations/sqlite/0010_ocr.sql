-- Text read by OCR (docs/ocr.md): the queue of documents whose pages wait to be read, and the
-- results kept so that an unchanged file is never read twice. A row belongs to one version of
-- its document; it waits while that is the catalog's version, it is neither done nor failed.
CREATE TABLE ocr (
    connector_id   TEXT NOT NULL,
    doc_id         TEXT NOT NULL,
    version        TEXT NOT NULL,               -- the document version its pages belong to
    update_time_ms INTEGER NOT NULL,            -- the newest documents are read first
    pages          TEXT NOT NULL,               -- JSON: the pages still to read, from 1
    read           TEXT NOT NULL DEFAULT '[]',  -- JSON: [page, text, confidence] read so far
    models         TEXT NOT NULL,               -- the OCR models the pages are read with
    done_ms        INTEGER,                     -- when every page was read and indexed
    error          TEXT,                        -- why it could not be read (not retried)
    PRIMARY KEY (connector_id, doc_id),
    FOREIGN KEY (connector_id, doc_id) REFERENCES documents (connector_id, doc_id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX ocr_waiting ON ocr (update_time_ms) WHERE done_ms IS NULL AND error IS NULL;
