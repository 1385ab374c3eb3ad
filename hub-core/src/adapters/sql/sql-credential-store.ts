import type { CredentialStore, WorkerCredential } from '../../ports/credential-store.ts';
import { CREDENTIAL_SQL } from './credential-statements.ts';
import type { SqlClient } from './sql-client.ts';
import { SQL } from './statements.ts';

export class SqlCredentialStore implements CredentialStore {
  constructor(private readonly db: SqlClient) {}

  async insert(c: Omit<WorkerCredential, 'last_linked_at'>): Promise<boolean> {
    const rows = await this.db.query(CREDENTIAL_SQL.insert, [c.worker_id, c.secret_hash, c.lan_ip, c.hostname, c.created_at]);
    return rows.length > 0;
  }

  async get(workerId: string): Promise<WorkerCredential | undefined> {
    return (await this.db.query<WorkerCredential>(CREDENTIAL_SQL.byId, [workerId], 'credentialById'))[0];
  }

  async markLinked(workerId: string, now: Date): Promise<void> {
    await this.db.query(CREDENTIAL_SQL.markLinked, [workerId, now]);
  }

  reset(workerId: string, actor: string, now: Date): Promise<WorkerCredential | undefined> {
    return this.db.transaction(async (tx) => {
      const gone = (await tx.query<WorkerCredential>(CREDENTIAL_SQL.delete, [workerId]))[0];
      const details = gone ? { lan_ip: gone.lan_ip, hostname: gone.hostname, enrolled_at: new Date(gone.created_at).toISOString() } : { had_credential: false };
      await tx.query(SQL.insertAudit, [now, actor, 'worker.reset_credentials', workerId, JSON.stringify(details)]);
      return gone;
    });
  }

  deleteUnlinkedBefore(before: Date, limit: number): Promise<WorkerCredential[]> {
    return this.db.query<WorkerCredential>(CREDENTIAL_SQL.deleteUnlinkedBefore, [before, limit]);
  }
}
