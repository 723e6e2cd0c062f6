-- Issue 28.4: before `graft sweep --at` learned to preview (writing needs --commit, at
-- the real time), a sweep "as of" a future date wrote its history rows at that date,
-- so History showed them on top until then and home said the last sweep "ran in 2
-- days". Such rows are brought back to the time of this upgrade: History never shows a
-- future time. (`at` is milliseconds since the epoch.)
UPDATE history
SET at = (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT
WHERE at > (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT;
