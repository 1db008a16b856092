-- The permits of job collections' limits (scheduler.Limiter). A row of
-- limit_permits is a concurrency permit held: its scope (collection, key
-- and the key's value), a slot below the limit's maxConcurrent, the
-- attempt that holds it and when it expires unless extended (Unix
-- nanoseconds), so that the permits of an instance that died return. A
-- row of limit_rates is the next instant a scope's rate grants a start.
-- Both are taken by conditional upserts in one transaction per attempt.

CREATE TABLE limit_permits (
	scope  text COLLATE "C" NOT NULL,
	slot   integer NOT NULL,
	holder text COLLATE "C" NOT NULL,
	until  bigint NOT NULL,
	PRIMARY KEY (scope, slot)
);

CREATE INDEX limit_permits_holder ON limit_permits (holder);

CREATE TABLE limit_rates (
	scope text COLLATE "C" PRIMARY KEY,
	next  bigint NOT NULL
);
