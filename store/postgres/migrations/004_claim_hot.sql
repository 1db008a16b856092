-- A claim changes no indexed column, so PostgreSQL can write it as a
-- heap-only (HOT) update: a new row version on the same page and no new
-- index entries.
--
-- A claim writes lease_owner, lease_until and version. Until now the
-- generated column ready_at, the later of the due time and the lease end,
-- was indexed, so every claim inserted a new entry into each index of jobs.
-- ClaimDue, NextDue and CountDue now read an index on the due time of the
-- jobs of Enabled collections and check the lease on the row: a job without
-- a lease is ready at its due time, a leased one at the later of its due
-- time and its lease end, which is never before its due time.
--
-- A fillfactor below 100 leaves room on each page of jobs for the new row
-- versions of claims. It applies to pages written from now on.
--
-- IF EXISTS and IF NOT EXISTS: a schema marked with an older version may
-- already have this layout.

DROP INDEX IF EXISTS jobs_ready;
ALTER TABLE jobs DROP COLUMN IF EXISTS ready_at;

CREATE INDEX IF NOT EXISTS jobs_due ON jobs (due_at, collection, name) WHERE coll_enabled AND due_at IS NOT NULL;

ALTER TABLE jobs SET (fillfactor = 50);
