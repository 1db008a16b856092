-- Records count their own changes of state. The row trigger of migration
-- 11 that counted every change of a job's state (a plpgsql call and an
-- insert of two rows per job) was about a tenth of a recorded outcome's
-- server work, and the outcome of a one-time job changes its state. The
-- store's record statements now read each job's state before their
-- update (a join of the job's row as the statement's snapshot sees it:
-- the update applies only at the version read, which no write changes
-- the state without raising) and insert the changes of the counts in the
-- same statement, one row per collection and state whatever the number
-- of jobs, so that the outcome and its change commit together or not at
-- all.
--
-- The trigger leaves out the updates that release a job's lease, which
-- only a record makes (a claim takes a lease, a replace keeps it, a give
-- back of an ahead claim changes no state). Replaces, and SQL of one's
-- own that changes the state of a job without releasing its lease, stay
-- counted by it. A process of a build older than schema 15 still running
-- after the upgrade records outcomes that no longer count: stop those
-- processes before the first new one starts, or call Recount after.

DROP TRIGGER jobs_count_moved ON jobs;

CREATE TRIGGER jobs_count_moved AFTER UPDATE OF collection, state ON jobs FOR EACH ROW
	WHEN ((OLD.collection IS DISTINCT FROM NEW.collection OR OLD.state IS DISTINCT FROM NEW.state)
		AND NOT (OLD.lease_owner <> '' AND NEW.lease_owner = ''))
	EXECUTE FUNCTION job_counts_moved();
