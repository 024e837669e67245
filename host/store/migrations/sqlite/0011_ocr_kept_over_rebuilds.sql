-- OCR's results set aside while the index is rebuilt (docs/ocr.md): a rebuild empties the
-- catalog, and with it the `ocr` rows of its documents. Their pages wait here until a sync
-- commits the document again (at the same version they go back to `ocr`, done; at another
-- they are dropped) or a full listing ends without it.
CREATE TABLE ocr_kept (
    connector_id   TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    doc_id         TEXT NOT NULL,
    version        TEXT NOT NULL,
    update_time_ms INTEGER NOT NULL,
    read           TEXT NOT NULL,   -- JSON: [page, text, confidence]
    models         TEXT NOT NULL,
    done_ms        INTEGER NOT NULL,
    PRIMARY KEY (connector_id, doc_id)
) WITHOUT ROWID;
