-- jobs_status_created (status, created_at DESC) is a prefix of jobs_status_created_id
-- (004): every query it served, that one serves, and each job's insert and its two status
-- updates (none of them HOT: status is indexed) wrote an entry into both.
DROP INDEX IF EXISTS jobs_status_created;
