-- Job assets (screenshots, HTML) in the shared database, when DATABASE_URL is set and S3 is
-- not: every hub behind nginx reads every job's assets (files on one hub's disk answered 404
-- on the others). Bounded per asset (SqlAssetStore) and deleted with the retention loop.
CREATE TABLE IF NOT EXISTS job_assets (
  job_id       uuid NOT NULL,
  name         text NOT NULL,
  content_type text NOT NULL,
  data         bytea NOT NULL,
  size_bytes   integer NOT NULL,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (job_id, name)
);

CREATE INDEX IF NOT EXISTS job_assets_created ON job_assets (created_at);
