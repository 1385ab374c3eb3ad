// Worker credentials (SPEC.md § Additions: register returns {worker_id, secret}). The store
// keeps a verifier of each secret, never the secret; the statements live in
// adapters/sql/credential-statements.ts, on the same database as the jobs.

export interface WorkerCredential {
  worker_id: string;
  /** sha256(secret), hex: see wire/worker-proof.ts for why this is enough. */
  secret_hash: string;
  lan_ip: string;
  hostname: string;
  created_at: Date;
  last_linked_at: Date | null;
}

export interface CredentialStore {
  /** Inserts a new credential; false when the id already has one (the row is left alone). */
  insert(c: Omit<WorkerCredential, 'last_linked_at'>): Promise<boolean>;
  get(workerId: string): Promise<WorkerCredential | undefined>;
  markLinked(workerId: string, now: Date): Promise<void>;
  /** Operator action: deletes the credential and writes the audit entry in one transaction. */
  reset(workerId: string, actor: string, now: Date): Promise<WorkerCredential | undefined>;
  /** Deletes enrollments created before `before` that never linked; returns what it deleted. */
  deleteUnlinkedBefore(before: Date, limit: number): Promise<WorkerCredential[]>;
}
