-- Issue 28.9: see migrations/sqlite/0027.
CREATE TABLE call_details (
    call_id BIGINT PRIMARY KEY,
    request TEXT NULL,
    response TEXT NULL
);
