-- Columns for what CountHistory groups and counts by, and a partial index
-- of the entries that faulted their occurrence (RecentHistory with Faulted
-- set: the latest faulted occurrences), read backwards from the newest id.
--
-- The columns copy fields of the JSON entry, because the json operators
-- refuse a document that holds \u0000 (which a message may): existing rows
-- are filled from the entry's text, where actionName and retryCount come
-- before the message (collection and job names hold no quotes). No entry
-- written before this migration faulted: that mark is new.

ALTER TABLE history
	ADD COLUMN action_name text,
	ADD COLUMN retry_count integer,
	ADD COLUMN faulted boolean NOT NULL DEFAULT false;

UPDATE history SET
	action_name = substring(entry::text from '"actionName":"([A-Za-z]*)"'),
	retry_count = coalesce(substring(entry::text from '"retryCount":(-?[0-9]+)')::integer, 0);

ALTER TABLE history ALTER COLUMN action_name SET NOT NULL, ALTER COLUMN retry_count SET NOT NULL;

CREATE INDEX history_faulted ON history (id) WHERE faulted;
