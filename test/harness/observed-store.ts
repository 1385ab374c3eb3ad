// A JobStore that tells what the hub asks of it: every call, once settled, is emitted as a
// 'call' event ({ method, ok }) and counted. Tests wait for the hub's own work instead of
// sleeping: "two redrive passes" is two listQueued calls, "a resend failed" a failed finishJob.
import { EventEmitter } from 'node:events';
import type { JobStore } from '../../hub-core/src/ports/job-store.ts';
import { waitFor } from './wait.ts';

export interface StoreCall {
  method: string;
  ok: boolean;
}

export interface ObservedStore {
  store: JobStore;
  events: EventEmitter;
  /** Settled calls of `method` so far (`ok` filters by outcome). */
  count(method: string, ok?: boolean): number;
  /** Waits until `n` more calls of `method` (with that outcome, if given) have settled than when it was called. */
  more(method: string, n: number, what: string, opts?: { ok?: boolean; timeoutMs?: number }): Promise<void>;
}

export function observeStore(inner: JobStore): ObservedStore {
  const events = new EventEmitter();
  const calls: StoreCall[] = [];
  const note = (c: StoreCall) => (calls.push(c), events.emit('call', c));
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]) => {
        const out = v.apply(target, args);
        if (out instanceof Promise) out.then(() => note({ method: prop, ok: true }), () => note({ method: prop, ok: false }));
        return out;
      };
    },
  });
  const count = (method: string, ok?: boolean) => calls.filter((c) => c.method === method && (ok === undefined || c.ok === ok)).length;
  return {
    store,
    events,
    count,
    async more(method, n, what, opts = {}) {
      const target = count(method, opts.ok) + n;
      await waitFor(what, async () => count(method, opts.ok) >= target, opts.timeoutMs ?? 15_000, 5);
    },
  };
}
