// `jobs:done` (SPEC.md § Redis keys): every hub announces the jobs that ended on it, so a long
// poll (`GET /jobs/:id?wait_s=`) waiting on another hub wakes at once instead of at its re-read.
import type { Redis } from 'ioredis';

/** Ids a `jobs:done` message may carry (a message stays far below Redis's and the subscribers' limits). */
const DONE_IDS_PER_MESSAGE = 1000;
/** The longest message a hub sends: DONE_IDS_PER_MESSAGE ids of at most 200 characters, quoted, escaped at worst. */
const DONE_MESSAGE_MAX_CHARS = DONE_IDS_PER_MESSAGE * (200 * 6 + 3) + 2;

export class RedisDoneChannel {
  private subscriber: Redis | undefined;
  private readonly listeners = new Set<(jobId: string) => void>();
  /** Ids announced in this event-loop turn, published together at its end. */
  private batch: string[] = [];
  private sent: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly channel: string,
  ) {}

  /**
   * Every job ending within one event-loop turn goes out in one message, a JSON array of ids:
   * a PUBLISH (a write to Redis, and a message to every subscribed hub) per job cost the hub
   * as much as the rest of the job's result handling together.
   */
  announce(jobId: string): Promise<void> {
    this.batch.push(jobId);
    this.sent ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        const ids = this.batch;
        this.batch = [];
        this.sent = undefined;
        const sends: Array<Promise<unknown>> = [];
        for (let i = 0; i < ids.length; i += DONE_IDS_PER_MESSAGE) sends.push(this.redis.publish(this.channel, JSON.stringify(ids.slice(i, i + DONE_IDS_PER_MESSAGE))));
        Promise.all(sends).then(() => resolve(), reject);
      }),
    );
    return this.sent;
  }

  listen(listener: (jobId: string) => void): () => void {
    this.listeners.add(listener);
    if (!this.subscriber) {
      // A connection of its own: a subscribed ioredis client can run no other command.
      const sub = this.redis.duplicate({ commandTimeout: undefined });
      this.subscriber = sub;
      sub.on('error', () => {}); // reconnects by itself; a missed message only costs a waiter its fallback re-read
      sub.on('message', (_channel: string, message: string) => {
        for (const jobId of doneIds(message)) for (const l of this.listeners) l(jobId);
      });
      void sub.subscribe(this.channel).catch(() => {});
    }
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.subscriber?.disconnect();
  }
}

/**
 * The ids in a `jobs:done` message: a JSON array of strings, or one bare id (as hubs before
 * batching sent it). Anything else, or anything longer than a hub ever sends, names no job: a
 * waiter only re-reads rows it already waits for, and its periodic re-read still finds its job.
 */
export function doneIds(message: string): string[] {
  if (message.length > DONE_MESSAGE_MAX_CHARS) return []; // not one a hub sends: not parsed
  if (!message.startsWith('[')) return message.length > 0 && message.length <= 200 ? [message] : [];
  try {
    const ids: unknown = JSON.parse(message);
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}
