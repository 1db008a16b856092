-- Counts of the jobs by collection and state, for CountJobs, so that the
-- dashboard's counts do not read every job. Triggers keep them in the
-- transactions that create jobs, delete them (also through a deleted
-- collection) or change their state, whatever statement does it. SQLite
-- runs one write transaction at a time, so a counter row per collection
-- and state costs no waiting; a row whose count reaches 0 goes.

CREATE TABLE job_counts (
	collection TEXT NOT NULL,
	state      TEXT NOT NULL,
	n          INTEGER NOT NULL,
	PRIMARY KEY (collection, state)
) WITHOUT ROWID;

INSERT INTO job_counts (collection, state, n) SELECT collection, state, count(*) FROM jobs GROUP BY collection, state;

CREATE TRIGGER jobs_count_created AFTER INSERT ON jobs BEGIN
	INSERT INTO job_counts (collection, state, n) VALUES (NEW.collection, NEW.state, 1)
		ON CONFLICT (collection, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_count_deleted AFTER DELETE ON jobs BEGIN
	UPDATE job_counts SET n = n - 1 WHERE collection = OLD.collection AND state = OLD.state;
	DELETE FROM job_counts WHERE collection = OLD.collection AND state = OLD.state AND n = 0;
END;

-- Only for the rows whose state changed: claims, leases and the outcomes
-- of recurring jobs change none.
CREATE TRIGGER jobs_count_moved AFTER UPDATE OF collection, state ON jobs
	WHEN OLD.collection IS NOT NEW.collection OR OLD.state IS NOT NEW.state BEGIN
	UPDATE job_counts SET n = n - 1 WHERE collection = OLD.collection AND state = OLD.state;
	DELETE FROM job_counts WHERE collection = OLD.collection AND state = OLD.state AND n = 0;
	INSERT INTO job_counts (collection, state, n) VALUES (NEW.collection, NEW.state, 1)
		ON CONFLICT (collection, state) DO UPDATE SET n = n + 1;
END;
