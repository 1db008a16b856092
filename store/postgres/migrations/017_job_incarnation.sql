-- A job's incarnation (scheduler.JobRecord.Incarnation): a random 64-bit
-- number that the store draws when it creates the job, never zero, which
-- tells the job from others created under its name before it, also at the
-- same instant. Record, RecordBatch and GiveBack check it with created_at.
-- Existing jobs have 0, no incarnation: they are told apart by created_at
-- alone, as before. A constant default adds the column without rewriting
-- the table.
--
-- IF NOT EXISTS, as in the other migrations that add columns: a schema
-- marked with an older version may already have the column (the
-- migration lock tests set the version back), and running this again
-- then changes nothing. That is safe: the migration runs in the
-- transaction that sets the schema version, under the migration's
-- advisory lock, so no two processes add the column, and a column of
-- that name in jobclock's own table is this one, whose drawn values are
-- kept. SQLite's migration 9 cannot say IF NOT EXISTS (its ADD COLUMN has
-- none): a file whose version was set back must have the column dropped
-- before it migrates again.

ALTER TABLE jobs ADD COLUMN IF NOT EXISTS incarnation bigint NOT NULL DEFAULT 0;

COMMENT ON COLUMN jobs.incarnation IS 'Drawn at random (never 0) when the job is created; 0 for jobs created before schema 17, which created_at alone tells apart.';
