// Bounds the worker-link sockets that have not finished their hello, for the hub and per
// source address. Each such socket may hold a 1 MB frame for 10 s, and the worker token (or
// nothing, on an open hub) is all it takes to open one: thousands of them held the memory of
// thousands of megabytes. A worker sends its hello within milliseconds of the challenge, so
// even many workers behind one NAT (or nginx) rarely have more than a few waiting at once; a
// refused one retries with its backoff.

export type HelloSlot =
  | { ok: true; release: () => void }
  | { ok: false; scope: 'source' | 'hub'; limit: number; waiting: number };

export class PendingHellos {
  private total = 0;
  private readonly bySource = new Map<string, number>();

  constructor(private readonly limits: { max: number; perSource: number }) {}

  /** A slot for one socket from `source`, or why not; release() is idempotent. */
  take(source: string): HelloSlot {
    const mine = this.bySource.get(source) ?? 0;
    if (mine >= this.limits.perSource) return { ok: false, scope: 'source', limit: this.limits.perSource, waiting: mine };
    if (this.total >= this.limits.max) return { ok: false, scope: 'hub', limit: this.limits.max, waiting: this.total };
    this.total++;
    this.bySource.set(source, mine + 1);
    let held = true;
    return {
      ok: true,
      release: () => {
        if (!held) return;
        held = false;
        this.total--;
        const left = (this.bySource.get(source) ?? 1) - 1;
        if (left > 0) this.bySource.set(source, left);
        else this.bySource.delete(source);
      },
    };
  }

  /** Sockets waiting now (for /metrics and tests). */
  get waiting(): number {
    return this.total;
  }
}
