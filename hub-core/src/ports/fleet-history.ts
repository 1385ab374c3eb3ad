// What the console's charts and queue panel read: the fleet samples each hub records, bucketed
// in the database, and the queue by kind.

export interface FleetSample {
  at: Date;
  hubId: string;
  queued: number;
  /** Age of the oldest queued job, in seconds; null when nothing is queued. */
  oldestQueuedS: number | null;
  inFlight: number;
  capacity: number;
}

/** One bucket of a range: jobs finished in it, and the samples taken in it (null when none was). */
export interface HistoryBucket {
  /** Start of the bucket. */
  t: Date;
  succeeded: number;
  failed: number;
  /** Largest queue depth sampled in the bucket. */
  queued: number | null;
  oldest_queued_s: number | null;
  /** Mean over the bucket's samples. */
  in_flight: number | null;
  capacity: number | null;
}

export interface QueuedKind {
  kind: string;
  queued: number;
  oldest_created_at: Date;
}

export interface FleetHistory {
  record(sample: FleetSample): Promise<void>;
  /** Deletes samples older than `before`. */
  prune(before: Date): Promise<number>;
  buckets(window: { from: Date; bucketS: number; buckets: number }): Promise<HistoryBucket[]>;
  /** Queued, unassigned jobs by kind with the oldest one's age, largest queue first. */
  queuedByKind(): Promise<QueuedKind[]>;
  /** The oldest queued job's id and kind (the one the queue panel explains). */
  oldestQueued(): Promise<{ id: string; kind: string; created_at: Date } | undefined>;
}
