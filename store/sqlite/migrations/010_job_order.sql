-- Indexes of each collection's jobs by the values ListJobs orders by
-- besides the name (scheduler.JobOrder), ties by name, so that a page of a
-- list in one of these orders reads that page and no more, in either
-- direction, whatever the collection's size.
--
-- The values are read from the status JSON, whose times are in UTC as
-- RFC 3339 with the trailing zeros of the fraction left out. Without its
-- "Z", such a time sorts as text in the order of its instants (an instant
-- without a fraction is a prefix of one with a fraction in the same
-- second), to the nanosecond. A job without the time (NULL) takes "~",
-- after every time, so that it comes last in ascending order and first in
-- descending order. A failure count left out (zero) is 0. ListJobs orders
-- by these very expressions (store/sqlite's orderBy), which the planner
-- matches to the index.

CREATE INDEX IF NOT EXISTS jobs_next_execution ON jobs (collection, coalesce(rtrim(json_extract(status, '$.nextExecutionTime'), 'Z'), '~'), name);
CREATE INDEX IF NOT EXISTS jobs_last_execution ON jobs (collection, coalesce(rtrim(json_extract(status, '$.lastExecutionTime'), 'Z'), '~'), name);
CREATE INDEX IF NOT EXISTS jobs_failures ON jobs (collection, coalesce(json_extract(status, '$.failureCount'), 0), name);
