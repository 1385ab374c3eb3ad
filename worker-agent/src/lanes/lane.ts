// What the agent needs from one lane, whatever runs it: a simulated lane (no browser, for
// load and fault tests) or a Chrome lane driven by puppeteer. The agent owns the link, the
// bookkeeping and the deadlines; a lane only runs one job or one session at a time.
import type { Asset, LaneRecycles, RunnableJob, SessionCommand, UrlPolicyLists, WorkKind } from 'paprika/wire';
import type { FrameSink } from '../live-view/screencast.ts';

export interface JobContext {
  readonly jobId: string;
  /** Epoch ms; the agent aborts `signal` when it passes. */
  readonly deadline: number;
  /** Aborted on cancel, on deadline and on agent shutdown. */
  readonly signal: AbortSignal;
  /** PAPRIKA_MAX_RESULT_BYTES: a macro whose values and screenshots pass it fails at that step. */
  readonly maxResultBytes?: number;
}

export interface JobOutcome {
  status: 'succeeded' | 'failed' | 'canceled';
  result?: unknown;
  error?: string;
  assets?: Asset[];
}

export interface Lane {
  readonly index: number;
  /** The page that shows this lane live (screencast) or the operator's noVNC URL. */
  readonly viewUrl: string | null;
  start(): Promise<void>;
  /** Never throws: a failure, a crash or a timeout comes back as a failed outcome with the reason. */
  runJob(job: RunnableJob, ctx: JobContext): Promise<JobOutcome>;
  openSession(sessionId: string): Promise<void>;
  /** Runs one session command; throws an Error whose message is the reason on failure. */
  sessionCommand(command: SessionCommand, signal: AbortSignal): Promise<unknown>;
  closeSession(): Promise<void>;
  /** Chrome lanes: how to start a fresh browser for a CDP client (GET /cdp). Absent: the lane serves none. */
  cdpBrowser?(): { chromePath: string; proxyPort?: number };
  /**
   * The wall's thumbnail of this lane: frames (and idle) to `sink` until the returned function
   * is called; `intervalMs` is the pace the thumbnailer keeps (a lane may produce faster).
   * Absent: the lane shows no screen.
   */
  followThumbs?(sink: FrameSink, intervalMs: number): () => void;
  stop(): Promise<void>;
}

export interface LanePool {
  readonly lanes: readonly Lane[];
  /** One portable Chrome (Windows): report `novnc_url` alone, max_concurrent 1. */
  readonly singleChrome: boolean;
  /** The work its lanes run (hello's `kinds`): the hub places nothing else here. */
  readonly kinds: readonly WorkKind[];
  /** Chrome lanes: the egress policy their proxies enforce (the hub's lists arrive in `welcome`). */
  readonly egress?: { setHubLists(lists: UrlPolicyLists): void };
  /** Chrome lanes: browser restarts since start, by reason (reported in heartbeats). */
  recycles?(): LaneRecycles;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What hello declares about a pool: a single Chrome reports `novnc_url` alone. */
export function poolCapabilities(pool: LanePool, version: string) {
  const single = pool.singleChrome;
  return {
    max_concurrent: pool.lanes.length,
    lane_novnc_urls: single ? [] : pool.lanes.map((l) => l.viewUrl ?? ''),
    novnc_url: single ? (pool.lanes[0]?.viewUrl ?? null) : null,
    version,
    platform: `${process.platform}-${process.arch}`,
  };
}
