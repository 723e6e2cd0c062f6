-- Issue 28.9: what a call sent and what the vendor answered, for the console's call
-- detail: the request as sent with every secret redacted (method, URL, headers, body;
-- JSON), and the answer (status, the headers Graft keeps, the body as the agent received
-- it, redacted and cut to 8 KB; JSON). Kept for the newest calls only
-- (GRAFT_CALL_DETAILS_KEPT), and never longer than the call's own row.
CREATE TABLE call_details (
    call_id INTEGER PRIMARY KEY,
    request TEXT NULL,
    response TEXT NULL
);
