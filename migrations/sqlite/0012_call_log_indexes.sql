-- The calls log is read newest first by call id, for one agent or one tool (issue 14.4):
-- these indexes serve `WHERE agent_id = ? ORDER BY id DESC` and the same by tool (a
-- review measured a full scan of a million calls, 0.1–0.2 s, with the (tool_id, at)
-- index of migration 0010, which no query uses).
DROP INDEX tool_calls_by_tool;
CREATE INDEX tool_calls_by_agent_id ON tool_calls(agent_id, id);
CREATE INDEX tool_calls_by_tool_id ON tool_calls(tool_id, id);
