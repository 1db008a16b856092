-- The permits of job collections' limits (scheduler.Limiter). A row of
-- limit_permits is a concurrency permit held: its scope (collection, key
-- and the key's value), a slot below the limit's maxConcurrent, the
-- attempt that holds it and when it expires unless extended (Unix
-- nanoseconds), so that the permits of an instance that died return. A
-- row of limit_rates is the next instant a scope's rate grants a start.

CREATE TABLE limit_permits (
	scope  TEXT NOT NULL,
	slot   INTEGER NOT NULL,
	holder TEXT NOT NULL,
	until  INTEGER NOT NULL,
	PRIMARY KEY (scope, slot)
) WITHOUT ROWID;

CREATE INDEX limit_permits_holder ON limit_permits (holder);

CREATE TABLE limit_rates (
	scope TEXT PRIMARY KEY,
	next  INTEGER NOT NULL
) WITHOUT ROWID;
