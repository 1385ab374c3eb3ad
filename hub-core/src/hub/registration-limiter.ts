// Bounds POST /workers/register: a bucket per source IP and one for the whole hub. Without
// it, one holder of the worker token enrolled 2,000 fake workers in two seconds. The limits
// are per hub (every hub of a fleet has its own), and behind nginx the source is nginx:
// PAPRIKA_REGISTER_* raise them for a large first roll-out.
import type { Config } from '../config.ts';
import { refill, takeToken, type Bucket, type BucketLimit } from '../domain/token-bucket.ts';
import type { Clock } from '../ports/clock.ts';

/** Sources remembered at most; beyond it, sources whose bucket is full again are forgotten. */
const MAX_SOURCES = 10_000;

export type LimitVerdict = { ok: true } | { ok: false; retryAfterS: number; scope: 'source' | 'hub'; limit: BucketLimit };

export class RegistrationLimiter {
  private readonly bySource = new Map<string, Bucket>();
  private overall: Bucket | undefined;
  private readonly perSource: BucketLimit;
  private readonly perHub: BucketLimit;

  constructor(config: Config, private readonly clock: Clock) {
    this.perSource = { ratePerMin: config.registerPerIpPerMin, burst: config.registerBurst };
    this.perHub = { ratePerMin: config.registerPerMin, burst: Math.max(config.registerPerMin, config.registerBurst) };
  }

  /** Takes a token for `source` and one from the hub's; a refused request takes neither. */
  take(source: string): LimitVerdict {
    const now = this.clock.now();
    const mine = takeToken(this.bySource.get(source), now, this.perSource);
    if (!mine.ok) return { ok: false, retryAfterS: Math.ceil(mine.retryAfterMs / 1000), scope: 'source', limit: this.perSource };
    const all = takeToken(this.overall, now, this.perHub);
    if (!all.ok) return { ok: false, retryAfterS: Math.ceil(all.retryAfterMs / 1000), scope: 'hub', limit: this.perHub };
    this.overall = all.bucket;
    this.bySource.set(source, mine.bucket);
    if (this.bySource.size > MAX_SOURCES) this.forgetIdle(now);
    return { ok: true };
  }

  private forgetIdle(now: number): void {
    for (const [source, b] of this.bySource) if (refill(b, now, this.perSource).tokens >= this.perSource.burst) this.bySource.delete(source);
  }
}
