-- SPEC §2 tool_notes: "what you have said about it", kept forever.
CREATE TABLE tool_notes (
    id INTEGER PRIMARY KEY,
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    author TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX tool_notes_by_tool ON tool_notes(tool_id, created_at);
