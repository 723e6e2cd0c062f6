-- Issue 30.4: the Activity page and each agent's page read counts, not the calls log. Each
-- call adds one to its row of call_counts at two widths (15 minutes and one UTC day) and to
-- its agent's day in agent_call_days, in the transaction that logs it (db::record_call); a
-- page then reads a few hundred rows whatever the number of calls. Slots are multiples of
-- their width from the Unix epoch (ms). error_code '' is a call without an error;
-- duration_bucket is an index into db::DURATION_BOUNDS_MS (its length: longer) for a call
-- sent to its vendor (answered, or vendor_unreachable: a timeout or a refused connection),
-- -1 for one that was not sent; max_ms is the longest duration counted in the row. The
-- counts are filled here from the calls already logged.
CREATE TABLE call_counts (
    width_ms BIGINT NOT NULL,
    slot BIGINT NOT NULL,
    vendor_id BIGINT NOT NULL,
    dry_run BOOLEAN NOT NULL,
    error_code TEXT NOT NULL,
    duration_bucket BIGINT NOT NULL,
    n BIGINT NOT NULL,
    max_ms BIGINT NOT NULL,
    PRIMARY KEY (width_ms, slot, vendor_id, dry_run, error_code, duration_bucket)
);
CREATE TABLE agent_call_days (
    agent_id BIGINT NOT NULL,
    day BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (agent_id, day)
);
INSERT INTO call_counts (width_ms, slot, vendor_id, dry_run, error_code, duration_bucket, n, max_ms)
SELECT w.width_ms, c.at - (c.at % w.width_ms), t.vendor_id, c.dry_run, COALESCE(c.error_code, ''),
       CASE WHEN c.http_status IS NULL AND COALESCE(c.error_code, '') <> 'vendor_unreachable' THEN -1 WHEN c.duration_ms < 1 THEN 0 WHEN c.duration_ms < 2 THEN 1 WHEN c.duration_ms < 5 THEN 2 WHEN c.duration_ms < 10 THEN 3 WHEN c.duration_ms < 20 THEN 4 WHEN c.duration_ms < 50 THEN 5 WHEN c.duration_ms < 100 THEN 6 WHEN c.duration_ms < 200 THEN 7 WHEN c.duration_ms < 500 THEN 8 WHEN c.duration_ms < 1000 THEN 9 WHEN c.duration_ms < 2000 THEN 10 WHEN c.duration_ms < 5000 THEN 11 WHEN c.duration_ms < 10000 THEN 12 WHEN c.duration_ms < 30000 THEN 13 WHEN c.duration_ms < 60000 THEN 14 WHEN c.duration_ms < 120000 THEN 15 ELSE 16 END, COUNT(*), MAX(c.duration_ms)
FROM tool_calls c JOIN tools t ON t.id = c.tool_id
CROSS JOIN (SELECT 900000 AS width_ms UNION ALL SELECT 86400000) w
GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO agent_call_days (agent_id, day, n)
SELECT agent_id, at - (at % 86400000), COUNT(*) FROM tool_calls GROUP BY 1, 2;
-- the covering index of 0021/0010 served the scans these counts replace; the retention
-- cut (DELETE … WHERE at < cutoff) still finds its rows by time
DROP INDEX tool_calls_activity;
CREATE INDEX tool_calls_by_at ON tool_calls(at);
