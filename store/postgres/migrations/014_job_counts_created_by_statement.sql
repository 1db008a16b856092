-- Creates count themselves. The statement-level trigger of migration 11
-- that counted every insert into jobs (a plpgsql call over a transition
-- table and a GROUP BY) was about half of a single create's server work.
-- The store's statements that create jobs insert their change of the
-- counts themselves instead: a single create in the same statement (a
-- data-modifying CTE: WITH i AS (INSERT INTO jobs ... RETURNING
-- collection, state) INSERT INTO job_count_deltas ...), so that the job
-- and its change commit together or not at all; a bulk create (COPY)
-- in one statement after its inserts, in the same transaction, one row
-- per state. Deletes (a job's, a collection's, Prune's) and changes of
-- state (records, replaces) stay counted by the triggers of migration 11,
-- whatever statement makes them.
--
-- SQL of one's own that inserts rows into jobs, not through the store,
-- must insert the change of the counts too (a row of job_count_deltas:
-- collection, state, +n), as it must take a free place (slot) of the
-- collection and set coll_enabled; otherwise CountJobs leaves those jobs
-- out until they are deleted (which then counts them below zero: such a
-- count is hidden).

DROP TRIGGER jobs_count_created ON jobs;
DROP FUNCTION job_counts_created();
