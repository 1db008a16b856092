-- The index of jobs by state leads with the state. With the collection
-- first, the planner of a table without statistics yet (a new store, or
-- a host transaction that creates many jobs) took it for lookups by
-- collection and name, reading every job of the collection on every put:
-- the cost of a put grew with the collection. Lists by state read it as
-- before (state, then collection, then name order); lookups take the
-- primary key.

DROP INDEX IF EXISTS jobs_state;
CREATE INDEX jobs_state ON jobs (state, collection, name);
