-- History entries are stored without what the columns of their row hold:
-- the entry column's JSON leaves out collection, job, status, endTime,
-- actionName and retryCount whenever the row's columns give them back
-- exactly, and the store fills them from the columns when it reads the
-- entry (rows written before keep their whole entry, read as before).
-- No table changes: the new version makes a build older than schema 16,
-- which would read such entries with those members empty, refuse the
-- schema instead of misreading it. Stop the processes of an older build
-- before the first new one starts, and do not go back to one.

COMMENT ON COLUMN history.entry IS 'The history entry as JSON, without the members that the row''s columns hold (collection, job, status, endTime, actionName, retryCount); rows written before schema 16 hold the whole entry.';
