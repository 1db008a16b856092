-- Jobs lose their foreign key to collections: the key made every created
-- job look its collection up again (a trigger's query per row, also for
-- each row of a bulk create's COPY), though every create already reads
-- and share-locks the collection's row in its own statement (a single
-- create) or locks it first (a bulk create), so that no job is created in
-- a collection that is gone or going. The store deletes a collection's
-- jobs itself, in the transaction that deletes the collection, after it,
-- so that it also deletes what a create holding the row's share lock
-- committed meanwhile.

ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_collection_fkey;
