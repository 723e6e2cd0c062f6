-- Approvals and versions (issue 12.15). An approval records the tool version it was
-- decided for, and why a granted approval went back to pending (a new version that
-- changes what the call does, or any version an agent authored). A tool's hints set by a
-- person survive later publishes that keep its method: `hints_by` names that person;
-- `read_only_by` names the person who marked it read-only (an agent-written tool then
-- runs without approval until an agent publishes again).
ALTER TABLE approvals ADD COLUMN version INTEGER NULL;
ALTER TABLE approvals ADD COLUMN changed TEXT NULL;
ALTER TABLE tools ADD COLUMN hints_by TEXT NULL;
ALTER TABLE tools ADD COLUMN read_only_by TEXT NULL;
