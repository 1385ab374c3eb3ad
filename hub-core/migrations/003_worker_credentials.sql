-- One credential a worker id (POST /workers/register). Only a verifier of the secret is kept:
-- secret_hash = sha256(secret), hex. Timestamps come from the hub's clock, like the jobs'.
-- last_linked_at stays NULL until the first authenticated link: enrollments that never link
-- expire (see ENROLLMENT_TTL_S in hub-core/src/hub/worker-enrollment.ts).
CREATE TABLE IF NOT EXISTS worker_credentials (
  worker_id      text PRIMARY KEY,
  secret_hash    text NOT NULL,
  lan_ip         text NOT NULL,
  hostname       text NOT NULL,
  created_at     timestamptz NOT NULL,
  last_linked_at timestamptz
);

CREATE INDEX IF NOT EXISTS worker_credentials_unlinked ON worker_credentials (created_at) WHERE last_linked_at IS NULL;
