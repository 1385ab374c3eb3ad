// Bounds the worker-link sockets that have not finished their hello, per source and on the hub.
// Each may hold a 1 MB frame until its hello, and the worker token (or nothing, on an open hub)
// is all it takes to open one: thousands of them held the memory of thousands of megabytes.
//
// A full bound does not turn newcomers away: it makes room by cutting the oldest socket that
// has sent nothing yet. A worker sends its hello within milliseconds of the challenge, so a
// socket that stays silent is what a flood is made of. Refusing instead let one holder of the
// token keep a whole fleet behind nginx off its hubs (every link comes from nginx's address,
// so the per-source bound is one bound for all): an outside probe held 300 workers off two
// hubs for a minute with 12 new silent sockets a second. A socket being closed unlinked (its
// hello refused, or none came) goes first, before any silent one: a flood of bad hellos must
// not hold slots through their close. Only sockets whose hello is being checked are never
// cut; when every slot holds one, the newcomer is refused.

export interface HelloSlot {
  /** Its first frame (the hello) arrived: while it is checked, never cut to make room. */
  heard(): void;
  /** It is being closed without a link (its close frame sent): the first to cut to make room. */
  ending(): void;
  /** The socket linked or is gone; idempotent. */
  release(): void;
}

export type Admission = { ok: true; slot: HelloSlot; evicted: number } | { ok: false; scope: 'source' | 'hub'; limit: number };

interface Entry {
  source: string;
  state: 'silent' | 'checking' | 'ending';
  cut: () => void;
  release: () => void;
}

export class PendingHellos {
  /** In arrival order: the first silent one is the oldest. */
  private readonly entries = new Set<Entry>();
  private readonly bySource = new Map<string, number>();

  constructor(private readonly limits: { max: number; perSource: number }) {}

  /**
   * A slot for one socket from `source`, making room if a bound is full by cutting the oldest
   * silent socket (of the same source first); `cut` ends this socket if it is ever the one cut.
   */
  take(source: string, cut: () => void): Admission {
    let evicted = 0;
    if ((this.bySource.get(source) ?? 0) >= this.limits.perSource) {
      if (!this.evictOldestSilent(source)) return { ok: false, scope: 'source', limit: this.limits.perSource };
      evicted++;
    }
    if (this.entries.size >= this.limits.max) {
      if (!this.evictOldestSilent(undefined)) return { ok: false, scope: 'hub', limit: this.limits.max };
      evicted++;
    }
    const entry: Entry = {
      source,
      state: 'silent',
      cut,
      release: () => {
        if (!this.entries.delete(entry)) return;
        const left = (this.bySource.get(source) ?? 1) - 1;
        if (left > 0) this.bySource.set(source, left);
        else this.bySource.delete(source);
      },
    };
    this.entries.add(entry);
    this.bySource.set(source, (this.bySource.get(source) ?? 0) + 1);
    return { ok: true, evicted, slot: { heard: () => (entry.state = 'checking'), ending: () => (entry.state = 'ending'), release: entry.release } };
  }

  /** Sockets waiting now, silent or with a hello being checked. */
  get waiting(): number {
    return this.entries.size;
  }

  /** Cuts the oldest socket being closed, else the oldest silent one (of `source`, if given). */
  private evictOldestSilent(source: string | undefined): boolean {
    const mine = (e: Entry) => source === undefined || e.source === source;
    let victim: Entry | undefined;
    for (const e of this.entries) {
      if (!mine(e)) continue;
      if (e.state === 'ending') {
        victim = e;
        break;
      }
      if (e.state === 'silent') victim ??= e;
    }
    if (!victim) return false;
    victim.release();
    victim.cut();
    return true;
  }
}
