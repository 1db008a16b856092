-- A job's tags, its labels: a JSON object of strings, NULL when it has
-- none. Existing jobs have none.

ALTER TABLE jobs ADD COLUMN tags TEXT CHECK (tags IS NULL OR json_valid(tags));
