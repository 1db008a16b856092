-- Each collection row keeps the number of its jobs, so that creating a job
-- checks the collection's quota without counting its jobs. The store keeps
-- it right in the transaction that creates or deletes jobs, with the
-- collection row locked; existing collections are counted here.

ALTER TABLE collections ADD COLUMN IF NOT EXISTS job_count bigint NOT NULL DEFAULT 0;

UPDATE collections c SET job_count = (SELECT count(*) FROM jobs j WHERE j.collection = c.name);
