-- Issue 28.1: a person disables an agent (its tokens are refused, its working set and
-- history are kept) and enables it again. NULL: enabled.
ALTER TABLE agents ADD COLUMN disabled_at BIGINT NULL;
