-- Why a document has no text though it may hold some (a scanned PDF, an image): it is found by
-- name only, and `connector status` says so. NULL for documents with text, or with none to have.
ALTER TABLE documents ADD COLUMN no_text TEXT;
