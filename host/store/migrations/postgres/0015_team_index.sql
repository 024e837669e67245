-- The team's index as a log: one row per document, its latest record (NULL once removed) at a
-- position that grows with every change, in commit order (writers take a transaction lock
-- before they number). Every host's index follows it from the position it last applied.
CREATE SEQUENCE team_index_positions;
CREATE TABLE team_index (
    connector TEXT COLLATE "C" NOT NULL,
    doc_id TEXT COLLATE "C" NOT NULL,
    position BIGINT NOT NULL,
    record BYTEA,
    size BIGINT NOT NULL,
    PRIMARY KEY (connector, doc_id)
);
CREATE UNIQUE INDEX team_index_by_position ON team_index (position);
