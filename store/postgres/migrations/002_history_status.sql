-- An index for the newest history entries of one status across all jobs
-- (RecentHistory with a status filter), read backwards from the newest id.
-- It is built inside the migration's transaction, which holds back writes
-- to history until it is built.

CREATE INDEX history_status ON history (status, id);
