-- Each job holds one of its collection's places, numbered from 0 to the
-- collection's maxJobCount less one, and no two jobs of a collection hold
-- the same (a unique index): a create takes a free place below the quota,
-- so that the quota holds, across processes and transactions, without a
-- count that every create updates. The collection row's job count
-- (migration 7), which serialised the creates of a collection and grew
-- that row's version chain in a transaction of many creates, goes.
-- Existing jobs take the places from 0 up, in name order; the update
-- rewrites every job row once.

ALTER TABLE jobs ADD COLUMN slot bigint;

UPDATE jobs j SET slot = r.n FROM (
	SELECT collection, name, row_number() OVER (PARTITION BY collection ORDER BY name) - 1 AS n FROM jobs
) r WHERE j.collection = r.collection AND j.name = r.name;

ALTER TABLE jobs ALTER COLUMN slot SET NOT NULL;

-- The place leads the index: with the collection first, the planner of a
-- table without statistics yet (a new store) took this index for lookups
-- by collection and name, reading every job of the collection.
CREATE UNIQUE INDEX jobs_slot ON jobs (slot, collection);

ALTER TABLE collections DROP COLUMN IF EXISTS job_count;
