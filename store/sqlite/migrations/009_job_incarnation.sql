-- A job's incarnation (scheduler.JobRecord.Incarnation): a random 64-bit
-- number that the store draws when it creates the job, never zero, which
-- tells the job from others created under its name before it, also at the
-- same instant. Record and GiveBack check it with created_at. Existing
-- jobs have 0, no incarnation: they are told apart by created_at alone,
-- as before.

ALTER TABLE jobs ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
