-- Issue 30.4: the console's Activity page reads the calls log and history by time across
-- every agent. Covering indexes: a range of `at` is read from the index alone (the calls
-- log's rows hold the input and the message, which the charts never need).
CREATE INDEX tool_calls_activity ON tool_calls(at, tool_id, dry_run, error_code, http_status, duration_ms);
CREATE INDEX history_activity ON history(at, action, cause);
