-- Indexes of each collection's jobs by the values ListJobs orders by
-- besides the name (scheduler.JobOrder), ties by name, so that a page of a
-- list in one of these orders reads that page and no more, in either
-- direction (descending: the index read backwards), whatever the
-- collection's size.
--
-- The values are read from the status JSON, whose times are in UTC as
-- RFC 3339 with the trailing zeros of the fraction left out. Without its
-- "Z", such a time sorts as bytes (COLLATE "C") in the order of its
-- instants (an instant without a fraction is a prefix of one with a
-- fraction in the same second), to the nanosecond; a job without the
-- time (NULL) comes last in ascending order, first in descending order,
-- as PostgreSQL orders NULLs by default. A failure count left out (zero)
-- is 0. ListJobs orders by these very expressions (store/postgres's
-- orderBy), which the planner matches to the index.
--
-- Each index begins with the collection under the collation "POSIX", which
-- compares as "C" (the collection's own) does, and ListJobs asks for the
-- collection so: a lookup of a job by collection and name, which asks for
-- the collection as it is, cannot take these indexes. The planner of a
-- table without statistics yet would take an index that begins with the
-- plain collection for it, reading every job of the collection on every
-- put (see migration 10).
--
-- A claim writes no column these indexes read (lease_owner, lease_until
-- and version), so it stays a heap-only update (see migration 4); a write
-- of a job's status adds an entry to each.
--
-- IF NOT EXISTS: a schema marked with an older version may already have
-- them. CREATE INDEX holds off writes to jobs while it reads them, once.

CREATE INDEX IF NOT EXISTS jobs_next_execution ON jobs ((collection COLLATE "POSIX"), (rtrim(status ->> 'nextExecutionTime', 'Z') COLLATE "C"), name);
CREATE INDEX IF NOT EXISTS jobs_last_execution ON jobs ((collection COLLATE "POSIX"), (rtrim(status ->> 'lastExecutionTime', 'Z') COLLATE "C"), name);
CREATE INDEX IF NOT EXISTS jobs_failures ON jobs ((collection COLLATE "POSIX"), (coalesce((status ->> 'failureCount')::int, 0)), name);
