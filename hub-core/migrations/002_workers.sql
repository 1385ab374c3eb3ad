-- Operator settings that must outlive a worker's link and a hub's restart (drain, standby),
-- and the audit log of who changed what.
CREATE TABLE IF NOT EXISTS worker_settings (
  worker_id  text PRIMARY KEY,
  status     text NOT NULL CHECK (status IN ('active', 'drain', 'standby')),
  updated_at timestamptz NOT NULL,
  updated_by text NOT NULL
);

CREATE TABLE IF NOT EXISTS audit_log (
  id      bigserial PRIMARY KEY,
  at      timestamptz NOT NULL,
  actor   text NOT NULL,
  action  text NOT NULL,
  target  text NOT NULL,
  details jsonb
);
