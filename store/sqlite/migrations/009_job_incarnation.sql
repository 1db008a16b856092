-- A job's incarnation (scheduler.JobRecord.Incarnation): a random 64-bit
-- number that the store draws when it creates the job, never zero, which
-- tells the job from others created under its name before it, also at the
-- same instant. Record and GiveBack check it with created_at. Existing
-- jobs have 0, no incarnation: they are told apart by created_at alone,
-- as before.
--
-- Runs once, in the transaction that sets the schema version to 9.
-- SQLite's ADD COLUMN has no IF NOT EXISTS (PostgreSQL's migration 17
-- has), so this migration cannot run again over a file that has the
-- column: a file whose version was set back must have the column dropped
-- before it migrates again (as the upgrade tests do).

ALTER TABLE jobs ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
