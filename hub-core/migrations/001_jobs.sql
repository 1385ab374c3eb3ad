-- One row a job (SPEC.md § Jobs). Timestamps come from the hub's clock, not now(),
-- so that tests can scale time and every hub agrees with the values it decides on.
CREATE TABLE IF NOT EXISTS jobs (
  id              uuid PRIMARY KEY,
  kind            text NOT NULL,
  spec            jsonb NOT NULL,
  status          text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
  worker_id       text,
  lane            integer,
  hub_id          text,
  session_id      text,
  novnc_url       text,
  error           text,
  result          jsonb,
  attempts        integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL,
  assigned_at     timestamptz,
  finished_at     timestamptz,
  deadline_at     timestamptz,
  released_at     timestamptz,
  idempotency_key text
);

CREATE UNIQUE INDEX IF NOT EXISTS jobs_idempotency_key ON jobs (idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Redrive and the reconciler read the open jobs only, oldest first.
CREATE INDEX IF NOT EXISTS jobs_queued ON jobs (created_at) WHERE status = 'queued';
CREATE INDEX IF NOT EXISTS jobs_running ON jobs (assigned_at) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS jobs_status_created ON jobs (status, created_at DESC);
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
