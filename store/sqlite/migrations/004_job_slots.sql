-- Each job holds one of its collection's places, numbered from 0 to the
-- collection's maxJobCount less one, and no two jobs of a collection hold
-- the same (a unique index): a create takes a free place below the quota,
-- so that the quota holds without counting the collection's jobs on each
-- create. Existing jobs take the places from 0 up, in name order.

ALTER TABLE jobs ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;

UPDATE jobs SET slot = r.n FROM (
	SELECT collection, name, row_number() OVER (PARTITION BY collection ORDER BY name) - 1 AS n FROM jobs
) AS r WHERE jobs.collection = r.collection AND jobs.name = r.name;

-- The place leads the index, so that no planner takes it for lookups by
-- collection and name (as PostgreSQL's did, on a table without
-- statistics).
CREATE UNIQUE INDEX jobs_slot ON jobs (slot, collection);
