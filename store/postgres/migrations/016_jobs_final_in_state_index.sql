-- One index fewer for the outcome of a one-time job. Recording a job
-- writes a new version of its row that is not heap-only (its due time
-- changes, and jobs_due indexes it), so each of its entries goes into
-- every index of jobs whose condition the new version meets: the outcome
-- that completes or faults a job went into jobs_state and into jobs_final,
-- the index of migration 1 on the last update of Completed and Faulted
-- jobs, which only Prune reads (FinalJobsBefore). jobs_state now ends with
-- the last update, and jobs_final goes: Prune reads the entries of the
-- jobs in those two states from jobs_state and compares their updated_at
-- in the index, without reading their rows (a bitmap scan of two ranges:
-- updated_at before the limit, and NULL); it reads every final job's
-- entry, about 20 ms per 100,000 of them on the test machine, every
-- prune (every 10 minutes by default), where jobs_final read only the
-- jobs deleted. Lists by state read jobs_state as before (state, then
-- collection, then name order). Each entry of jobs_state is 8 bytes
-- longer.
--
-- The index is built inside the migration's transaction, which holds back
-- writes to jobs until it is built (300,000 jobs: 1.7 s on the test
-- machine).
-- Instances of the previous build still running after the upgrade run as
-- before: no statement of theirs names an index, and their Prune finds the
-- same jobs; one started after the upgrade refuses the newer schema.

DROP INDEX IF EXISTS jobs_final;
DROP INDEX IF EXISTS jobs_state;
CREATE INDEX jobs_state ON jobs (state, collection, name, updated_at);
