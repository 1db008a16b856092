-- Counts of the jobs by collection and state, for CountJobs, so that the
-- dashboard's counts do not read every job. Triggers keep them in the
-- transactions that create jobs, delete them (also through a deleted
-- collection) or change their state, whatever statement does it. A
-- counter row that every create updated would serialise the creates of a
-- collection and, in a transaction of many creates, grow that row's
-- version chain; so the triggers only insert changes (job_count_deltas:
-- +n and -n by collection and state), which wait for nothing, and the
-- store folds them into job_counts now and then (when counting, and when
-- pruning), one fold at a time. A count is the sum of both tables, read
-- in one statement: exact, and one consistent state.

CREATE TABLE job_counts (
	collection text COLLATE "C" NOT NULL,
	state      text COLLATE "C" NOT NULL,
	n          bigint NOT NULL,
	PRIMARY KEY (collection, state)
);

CREATE TABLE job_count_deltas (
	collection text COLLATE "C" NOT NULL,
	state      text COLLATE "C" NOT NULL,
	n          bigint NOT NULL
);

INSERT INTO job_counts (collection, state, n) SELECT collection, state, count(*) FROM jobs GROUP BY 1, 2;

-- Creates and deletes: one change per statement, collection and state (a
-- bulk put's COPY of thousands of jobs adds one row).
CREATE FUNCTION job_counts_created() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	INSERT INTO job_count_deltas (collection, state, n) SELECT collection, state, count(*) FROM created GROUP BY 1, 2;
	RETURN NULL;
END $$;

CREATE FUNCTION job_counts_deleted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	INSERT INTO job_count_deltas (collection, state, n) SELECT collection, state, -count(*) FROM deleted GROUP BY 1, 2;
	RETURN NULL;
END $$;

-- A change of state: per row, and only for the rows whose state changed
-- (claims, leases and the outcomes of recurring jobs change none, and
-- pay nothing).
CREATE FUNCTION job_counts_moved() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	INSERT INTO job_count_deltas (collection, state, n) VALUES (OLD.collection, OLD.state, -1), (NEW.collection, NEW.state, 1);
	RETURN NULL;
END $$;

CREATE TRIGGER jobs_count_created AFTER INSERT ON jobs REFERENCING NEW TABLE AS created
	FOR EACH STATEMENT EXECUTE FUNCTION job_counts_created();

CREATE TRIGGER jobs_count_deleted AFTER DELETE ON jobs REFERENCING OLD TABLE AS deleted
	FOR EACH STATEMENT EXECUTE FUNCTION job_counts_deleted();

CREATE TRIGGER jobs_count_moved AFTER UPDATE OF collection, state ON jobs FOR EACH ROW
	WHEN (OLD.collection IS DISTINCT FROM NEW.collection OR OLD.state IS DISTINCT FROM NEW.state)
	EXECUTE FUNCTION job_counts_moved();
