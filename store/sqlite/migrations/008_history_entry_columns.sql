-- History entries are stored without what the columns of their row hold:
-- the entry column's JSON leaves out collection, job, status and endTime
-- whenever the row's columns give them back exactly, and the store fills
-- them from the columns when it reads the entry (rows written before
-- keep their whole entry, read as before; actionName and retryCount stay
-- in the JSON, which the statistics read). No table changes: the new
-- version makes a build older than schema 8, which would read such
-- entries with those members empty, refuse the file instead of misreading
-- it. Stop the processes of an older build before the first new one
-- starts, and do not go back to one.

SELECT 1;
