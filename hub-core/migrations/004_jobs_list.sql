-- GET /jobs pages newest first with a (created_at, id) cursor: jobs created in the same
-- millisecond keep a stable order and none is skipped or repeated between pages.
CREATE INDEX IF NOT EXISTS jobs_created_id ON jobs (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS jobs_status_created_id ON jobs (status, created_at DESC, id DESC);
