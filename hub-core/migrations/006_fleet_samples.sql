-- The charts' history: each hub writes its queue and capacity sample every few seconds, and
-- GET /admin/stats/history buckets them (with the finished jobs) for 15 min, 1 h or 24 h.
-- Values are fleet-wide, so several hubs write near-copies; the buckets take max/avg.
CREATE TABLE IF NOT EXISTS fleet_samples (
  at              timestamptz NOT NULL,
  hub_id          text NOT NULL,
  queued          integer NOT NULL,
  oldest_queued_s double precision,
  in_flight       integer NOT NULL,
  capacity        integer NOT NULL
);
CREATE INDEX IF NOT EXISTS fleet_samples_at ON fleet_samples (at);

-- The console's worker drawer: a worker's last jobs, and the audit entries about it.
CREATE INDEX IF NOT EXISTS jobs_worker_created ON jobs (worker_id, created_at DESC) WHERE worker_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS audit_log_target ON audit_log (target, id DESC);
