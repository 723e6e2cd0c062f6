-- Search (SPEC §3.4, issue 10). Each tool version carries its search text, computed once
-- when the version is made (JSON: name, summary, tags, path, verbs, params, description);
-- NULL for versions made before this migration, filled in at the next start.
ALTER TABLE tool_versions ADD COLUMN search_text TEXT NULL;

-- Sentence embeddings, content-addressed: one row per (model, text) with the unit vector
-- as little-endian f32. A tool version's text, or a stored document's operation, is
-- embedded once per model; a new model embeds again, an unchanged text never.
CREATE TABLE embeddings (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
);
