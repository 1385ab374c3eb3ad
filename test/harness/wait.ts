// Waiting for what a test expects instead of sleeping: a condition polled until it holds, or
// the next event of an emitter. Both are bounded and say what they waited for when they give
// up, so a slow machine makes a test slower, never wrong, and a failure names its cause.
import type { EventEmitter } from 'node:events';

/** Polls `fn` until it returns a truthy value (returned); throws after `timeoutMs` naming `what` and the last error. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * The next `event` of `emitter` whose arguments pass `match` (its first argument is returned).
 * Subscribe before doing what causes the event: `const seen = nextEvent(…); act(); await seen`.
 */
export function nextEvent<T = unknown>(emitter: Pick<EventEmitter, 'on' | 'off'>, event: string, what: string, match: (...args: any[]) => boolean = () => true, timeoutMs = 15_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, onEvent);
      reject(new Error(`timed out waiting for ${what} (no matching '${event}' within ${timeoutMs / 1000} s)`));
    }, timeoutMs);
    function onEvent(...args: any[]) {
      if (!match(...args)) return;
      clearTimeout(timer);
      emitter.off(event, onEvent);
      resolve(args[0] as T);
    }
    emitter.on(event, onEvent);
  });
}
