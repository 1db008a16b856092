-- The first schema of jobclock's SQLite store.
--
-- Times in columns are Unix nanoseconds (UTC), NULL for "none"; the exact
-- values also live in the JSON columns. JSON columns hold what encoding/json
-- makes of the scheduler's types.

CREATE TABLE collections (
	name        TEXT PRIMARY KEY,
	definition  TEXT NOT NULL CHECK (json_valid(definition)), -- JobCollection
	enabled     INTEGER NOT NULL,                            -- state is Enabled
	etag        TEXT NOT NULL,
	version     INTEGER NOT NULL,
	created_at  INTEGER,
	updated_at  INTEGER
);

CREATE TABLE jobs (
	collection   TEXT NOT NULL REFERENCES collections (name) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	definition   TEXT NOT NULL CHECK (json_valid(definition)), -- Job
	state        TEXT NOT NULL,
	status       TEXT NOT NULL CHECK (json_valid(status)),     -- JobStatus
	schedule     TEXT NOT NULL CHECK (json_valid(schedule)),   -- JobSchedule
	etag         TEXT NOT NULL,
	version      INTEGER NOT NULL,
	created_at   INTEGER,
	updated_at   INTEGER,
	due_at       INTEGER,                    -- schedule.dueAt
	lease_owner  TEXT NOT NULL DEFAULT '',
	lease_until  INTEGER,
	coll_enabled INTEGER NOT NULL,           -- copy of collections.enabled
	-- When ClaimDue may take the job: NULL when never.
	ready_at     INTEGER GENERATED ALWAYS AS (
		CASE WHEN coll_enabled AND due_at IS NOT NULL THEN max(due_at, coalesce(lease_until, due_at)) END
	) STORED,
	PRIMARY KEY (collection, name)
);

CREATE INDEX jobs_ready ON jobs (ready_at, collection, name) WHERE ready_at IS NOT NULL;
CREATE INDEX jobs_state ON jobs (collection, state, name);
CREATE INDEX jobs_final ON jobs (updated_at) WHERE state IN ('Completed', 'Faulted');

CREATE TABLE history (
	id          INTEGER PRIMARY KEY AUTOINCREMENT, -- recording order
	collection  TEXT NOT NULL,
	job         TEXT NOT NULL,
	status      TEXT NOT NULL,
	end_time    INTEGER,
	entry       TEXT NOT NULL CHECK (json_valid(entry)), -- HistoryEntry
	FOREIGN KEY (collection, job) REFERENCES jobs (collection, name) ON DELETE CASCADE
);

CREATE INDEX history_job ON history (collection, job, id);
CREATE INDEX history_end ON history (end_time);
