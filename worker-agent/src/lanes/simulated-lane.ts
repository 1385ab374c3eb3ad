// Lanes without a browser (`--simulate-lanes N`): they run `sleep` jobs, `fetch` jobs of the
// simulated site (below) and the `ping` session op only, so load and fault tests can run
// hundreds of lanes on one machine.
import type { RunnableJob, SessionCommand } from 'paprika/wire';
import type { FrameSink } from '../live-view/screencast.ts';
import type { JobContext, JobOutcome, Lane, LanePool } from './lane.ts';
import { syntheticThumb } from './simulated-thumbs.ts';

export class SimulatedLane implements Lane {
  private session: string | null = null;
  constructor(
    readonly index: number,
    readonly viewUrl: string,
  ) {}

  async start(): Promise<void> {}

  async runJob(job: RunnableJob, ctx: JobContext): Promise<JobOutcome> {
    if (job.kind === 'fetch') return simulatedFetch(job.spec.url, job.spec.screenshot ?? false);
    if (job.kind !== 'sleep') return { status: 'failed', error: `simulated lanes run sleep and ${SIM_SITE} fetch jobs only, not ${job.kind}` };
    const started = Date.now();
    const aborted = await sleepUnlessAborted(job.spec.ms, ctx.signal);
    if (aborted) return { status: 'canceled', error: String(ctx.signal.reason ?? 'canceled') };
    return { status: 'succeeded', result: { slept_ms: Date.now() - started, lane: this.index } };
  }

  async openSession(sessionId: string): Promise<void> {
    this.session = sessionId;
  }

  async sessionCommand(command: SessionCommand): Promise<unknown> {
    if (command.op !== 'ping') throw new Error(`simulated lanes answer ping only, not ${command.op}`);
    return { pong: true, lane: this.index, session_id: this.session };
  }

  async closeSession(): Promise<void> {
    this.session = null;
  }

  /** A synthetic screen that changes every interval (busy or not): the wall's load without Chrome. */
  followThumbs(sink: FrameSink, intervalMs: number): () => void {
    let n = this.index;
    const tick = () => {
      if (!sink.congested()) sink.frame(syntheticThumb(n++));
    };
    tick();
    const timer = setInterval(tick, intervalMs);
    return () => clearInterval(timer);
  }

  async stop(): Promise<void> {}
}

/** `sleep` jobs and sessions (whose only op here is `ping`). */
export const SIMULATED_KINDS = ['sleep', 'session'] as const;

/** `site`: the lanes also fetch the simulated site (`--simulate-site`, for fault runs), and say so in hello. */
export function simulatedPool(n: number, viewBase: string, o: { site?: boolean } = {}): LanePool {
  const lanes = Array.from({ length: n }, (_, i) => new SimulatedLane(i, `${viewBase}/lanes/${i}/view`));
  return { lanes, singleChrome: false, kinds: o.site ? ['sleep', 'fetch', 'session'] : SIMULATED_KINDS, start: async () => {}, stop: async () => {} };
}

function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(true);
    if (ms === 0) return resolve(false); // a no-op job: no timer tick to wait for
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(false);
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      resolve(true);
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The simulated site, for fault runs: `http://sim.invalid/bytes/N` "renders" a screenshot of N
 * bytes (a result too large for the link, when N is), `http://sim.invalid/odd-text` a title
 * with a NUL and a lone surrogate (text Postgres cannot store).
 */
const SIM_SITE = 'http://sim.invalid/';

function simulatedFetch(url: string, screenshot: boolean): JobOutcome {
  if (!url.startsWith(SIM_SITE)) return { status: 'failed', error: `simulated lanes fetch ${SIM_SITE} only, not ${url}` };
  const bytes = /^bytes\/(\d{1,9})$/.exec(url.slice(SIM_SITE.length));
  const title = url === `${SIM_SITE}odd-text` ? 'odd\u0000text\uD800' : 'simulated';
  const n = bytes ? Number(bytes[1]) : 100;
  const assets = screenshot ? [{ name: 'screenshot.png', content_type: 'image/png', data_base64: Buffer.alloc(n, 7).toString('base64') }] : [];
  return { status: 'succeeded', result: { status_code: 200, final_url: url, title, html_bytes: n }, assets };
}
