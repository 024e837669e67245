-- A full listing now remembers the ids it saw in memory and removes the others at its end, so
-- unchanged documents are no longer written at every listing: the index on generations, which
-- served that sweep, only cost writes.
DROP INDEX documents_generation;
