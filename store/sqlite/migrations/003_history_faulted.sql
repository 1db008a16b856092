-- A partial index of the history entries that faulted their occurrence
-- (RecentHistory with Faulted set: the latest faulted occurrences), read
-- backwards from the newest id. The expression is the one the queries use.

CREATE INDEX history_faulted ON history (id) WHERE json_extract(entry, '$.faulted') = 1;
