import type { FleetHistory, FleetSample, HistoryBucket, QueuedKind } from '../../ports/fleet-history.ts';
import { HISTORY_SQL } from './fleet-history-statements.ts';
import type { SqlClient } from './sql-client.ts';

export class SqlFleetHistory implements FleetHistory {
  constructor(private readonly db: SqlClient) {}

  async record(s: FleetSample): Promise<void> {
    await this.db.query(HISTORY_SQL.record, [s.at, s.hubId, s.queued, s.oldestQueuedS, s.inFlight, s.capacity], 'recordFleetSample');
  }

  async prune(before: Date): Promise<number> {
    return (await this.db.query(HISTORY_SQL.prune, [before])).length;
  }

  buckets(w: { from: Date; bucketS: number; buckets: number }): Promise<HistoryBucket[]> {
    return this.db.query<HistoryBucket>(HISTORY_SQL.buckets, [w.from, w.bucketS, w.buckets], 'historyBuckets');
  }

  queuedByKind(): Promise<QueuedKind[]> {
    return this.db.query<QueuedKind>(HISTORY_SQL.queuedByKind, [], 'queuedByKind');
  }

  async oldestQueued(): Promise<{ id: string; kind: string; created_at: Date } | undefined> {
    return (await this.db.query<{ id: string; kind: string; created_at: Date }>(HISTORY_SQL.oldestQueued, [], 'oldestQueued'))[0];
  }
}
