// Lanes without a browser (`--simulate-lanes N`): they run `sleep` jobs and the `ping`
// session op only, so load and fault tests can run hundreds of lanes on one machine.
import type { RunnableJob, SessionCommand } from 'paprika/wire';
import type { JobContext, JobOutcome, Lane, LanePool } from './lane.ts';

export class SimulatedLane implements Lane {
  private session: string | null = null;
  constructor(
    readonly index: number,
    readonly viewUrl: string,
  ) {}

  async start(): Promise<void> {}

  async runJob(job: RunnableJob, ctx: JobContext): Promise<JobOutcome> {
    if (job.kind !== 'sleep') return { status: 'failed', error: `simulated lanes run sleep jobs only, not ${job.kind}` };
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

  async stop(): Promise<void> {}
}

/** `sleep` jobs and sessions (whose only op here is `ping`). */
export const SIMULATED_KINDS = ['sleep', 'session'] as const;

export function simulatedPool(n: number, viewBase: string): LanePool {
  const lanes = Array.from({ length: n }, (_, i) => new SimulatedLane(i, `${viewBase}/lanes/${i}/view`));
  return { lanes, singleChrome: false, kinds: SIMULATED_KINDS, start: async () => {}, stop: async () => {} };
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
