-- Issue 14.4: the calls log says what each call sent and why it failed. `input` is the
-- agent's input as JSON with secret-looking fields and the connection's secrets replaced
-- by "<redacted>" and long strings cut (at most 4 KB; NULL for calls made before this
-- migration); `message` is the first 300 characters of the error told to the agent. The
-- console reads the log by agent (tool_calls_by_agent) and by tool (below), and the home
-- page finds the last sweep that demoted something by cause (history_by_cause).
ALTER TABLE tool_calls ADD COLUMN input TEXT NULL;
ALTER TABLE tool_calls ADD COLUMN message TEXT NULL;
CREATE INDEX tool_calls_by_tool ON tool_calls(tool_id, at);
CREATE INDEX history_by_cause ON history(cause, at);
