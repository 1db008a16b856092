-- An index for the newest history entries of one status across all jobs
-- (RecentHistory with a status filter), read backwards from the newest id.

CREATE INDEX history_status ON history (status, id);
