-- A job's incarnation (scheduler.JobRecord.Incarnation): a random 64-bit
-- number that the store draws when it creates the job, never zero, which
-- tells the job from others created under its name before it, also at the
-- same instant. Record, RecordBatch and GiveBack check it with created_at.
-- Existing jobs have 0, no incarnation: they are told apart by created_at
-- alone, as before. A constant default adds the column without rewriting
-- the table; IF NOT EXISTS lets a schema whose version was set back (as
-- the upgrade tests do) run the migration again.

ALTER TABLE jobs ADD COLUMN IF NOT EXISTS incarnation bigint NOT NULL DEFAULT 0;

COMMENT ON COLUMN jobs.incarnation IS 'Drawn at random (never 0) when the job is created; 0 for jobs created before schema 17, which created_at alone tells apart.';
