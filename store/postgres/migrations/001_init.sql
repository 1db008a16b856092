-- The first schema of jobclock's PostgreSQL store. It runs with search_path
-- set to the store's schema.
--
-- Times in columns are Unix nanoseconds (UTC), NULL for "none"; the exact
-- values also live in the JSON columns. Names compare bytewise (COLLATE "C"),
-- so listings are ordered as Go orders strings.

CREATE TABLE collections (
	name        text COLLATE "C" PRIMARY KEY,
	definition  json NOT NULL,              -- JobCollection
	enabled     boolean NOT NULL,           -- state is Enabled
	etag        text NOT NULL,
	version     bigint NOT NULL,
	created_at  bigint,
	updated_at  bigint
);

CREATE TABLE jobs (
	collection   text COLLATE "C" NOT NULL REFERENCES collections (name) ON DELETE CASCADE,
	name         text COLLATE "C" NOT NULL,
	definition   json NOT NULL,             -- Job
	state        text NOT NULL,
	status       json NOT NULL,             -- JobStatus
	schedule     json NOT NULL,             -- JobSchedule
	etag         text NOT NULL,
	version      bigint NOT NULL,
	created_at   bigint,
	updated_at   bigint,
	due_at       bigint,                    -- schedule.dueAt
	lease_owner  text NOT NULL DEFAULT '',
	lease_until  bigint,
	coll_enabled boolean NOT NULL,          -- copy of collections.enabled
	-- When ClaimDue may take the job: NULL when never.
	ready_at     bigint GENERATED ALWAYS AS (
		CASE WHEN coll_enabled AND due_at IS NOT NULL THEN GREATEST(due_at, lease_until) END
	) STORED,
	PRIMARY KEY (collection, name)
);

CREATE INDEX jobs_ready ON jobs (ready_at, collection, name) WHERE ready_at IS NOT NULL;
CREATE INDEX jobs_state ON jobs (collection, state, name);
CREATE INDEX jobs_final ON jobs (updated_at) WHERE state IN ('Completed', 'Faulted');

CREATE TABLE history (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- recording order
	collection  text COLLATE "C" NOT NULL,
	job         text COLLATE "C" NOT NULL,
	status      text NOT NULL,
	end_time    bigint,
	entry       json NOT NULL,              -- HistoryEntry
	FOREIGN KEY (collection, job) REFERENCES jobs (collection, name) ON DELETE CASCADE
);

CREATE INDEX history_job ON history (collection, job, id);
CREATE INDEX history_end ON history (end_time);
