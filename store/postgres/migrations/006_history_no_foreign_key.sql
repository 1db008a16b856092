-- History loses its foreign key to jobs: the key made every recorded
-- entry look its job up again and lock it. The store deletes a job's
-- history itself, in the transaction that deletes the job (DeleteJob,
-- DeleteCollection, Prune), after the job, so that it also deletes what a
-- Record holding the job's row lock committed meanwhile; and Record adds
-- history only in the statement that updates the job, which finds no job
-- once the delete committed.

ALTER TABLE history DROP CONSTRAINT IF EXISTS history_collection_job_fkey;
