// The worker link (SPEC.md § Worker link): every message is JSON with `type` and `v: 1`.
// Both ends parse with parseWorkerMessage / parseHubMessage at the socket edge; inside,
// only typed values travel. A malformed message yields an error value, never a throw.
import { z } from 'zod';
import { FetchSpec, MacroSpec, MAX_MACRO_STEPS, SessionCommand, SleepSpec } from './job-spec.ts';
import { issuesToDetails } from './errors.ts';

/** A worker's session_reply error for a session it does not hold (ended by its idle timeout, say): the hub then forgets it too. */
export const NO_SUCH_SESSION = 'no such session on this worker';

export const PROTOCOL_VERSION = 1 as const;
/** Largest frame either side accepts (screenshots travel inside job_result). */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024;
/**
 * What the hub's socket reads before it gives up on a frame (close 1009). Frames between
 * MAX_FRAME_BYTES and this are read and answered `result_refused`, a refusal the worker acts
 * on; only a frame past this ceiling drops the link.
 */
export const LINK_CEILING_BYTES = 2 * MAX_FRAME_BYTES;
/** Largest CDP message a hub or worker passes on (GET /cdp and its tunnels): a full-page screenshot of a long page fits. */
export const CDP_MAX_FRAME_BYTES = 256 * 1024 * 1024;

const v = z.literal(PROTOCOL_VERSION);

/**
 * Deepest nesting of arrays and objects a result may have. Postgres takes far deeper jsonb, but
 * the hub walks a result (unstorable text, the JSON it sends on) recursively: 5,000 nested
 * objects overflowed its stack, the result was never stored and the job stayed running.
 */
export const MAX_RESULT_DEPTH = 256;

/** Whether `value` nests arrays and objects deeper than `max` (iterative: any depth is safe to ask). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
  }
  return false;
}

const ResultValue = z.unknown().refine((x) => !nestedDeeperThan(x, MAX_RESULT_DEPTH), `nested deeper than ${MAX_RESULT_DEPTH} levels of arrays and objects`);
const id = z.string().min(1).max(200);
const pct = z.number().min(0).max(100);

export const LaneState = z.strictObject({
  index: z.number().int().min(0),
  view_url: z.string().max(2000).nullable(),
  busy: z.boolean(),
  job_id: id.nullable(),
  session_id: id.nullable().optional(),
  /** The CDP client (GET /cdp) holding the lane, if any. */
  cdp_id: id.nullable().optional(),
  /** Epoch ms the lane's current holder took it (the hub's own record; workers do not send it). */
  since_ms: z.number().nullable().optional(),
});
export type LaneState = z.infer<typeof LaneState>;

export const Capabilities = z.strictObject({
  max_concurrent: z.number().int().min(0).max(1024),
  lane_novnc_urls: z.array(z.string().max(2000)).max(1024),
  novnc_url: z.string().max(2000).nullable(),
  version: z.string().max(100),
  platform: z.string().max(100),
});
export type Capabilities = z.infer<typeof Capabilities>;

/** Lane Chrome restarts since the agent started, by reason (cumulative; the hub counts the growth). */
export const LaneRecycles = z.strictObject({ jobs: z.number().int().min(0), rss: z.number().int().min(0), crash: z.number().int().min(0) });
export type LaneRecycles = z.infer<typeof LaneRecycles>;

/** The egress rules a hub sends its workers (the built-in deny list is implied). */
export const UrlPolicyLists = z.strictObject({ deny: z.array(z.string().max(300)).max(1000), allow: z.array(z.string().max(300)).max(1000).nullable() });
export type UrlPolicyLists = z.infer<typeof UrlPolicyLists>;

/** A job the worker still holds when it (re)links: lets the hub keep it instead of orphaning it. */
const HeldJob = z.strictObject({ job_id: id, lane: z.number().int().min(0), assignment_id: id });

/** A job the worker finished whose result the hub has not acked yet (it is sent again after hello). */
const PendingResult = z.strictObject({ job_id: id, assignment_id: id });

/** Longest error text a job result, session reply or error message may carry. */
export const MAX_ERROR_CHARS = 20_000;
const JobError = z.string().max(MAX_ERROR_CHARS);

/**
 * An error text the link accepts: cut to MAX_ERROR_CHARS, saying so. Workers send every error
 * through it: a page's exception text can be any length, and a result the hub's schema refuses
 * would be sent again forever while its job held the lane.
 */
export function boundedError(text: string): string {
  if (text.length <= MAX_ERROR_CHARS) return text;
  const kept = MAX_ERROR_CHARS - 64; // room for the note (at most ~40 characters)
  return `${text.slice(0, kept)} … (${text.length - kept} characters cut)`;
}

/**
 * Most assets one result may carry: a screenshot for every step of the longest macro, its
 * failure.png and result.json. (It was 100, below what a valid macro makes: a macro of 101
 * screenshots had its result refused by the schema and sent again every heartbeat.)
 */
export const MAX_ASSETS = MAX_MACRO_STEPS + 2;
const Asset = z.strictObject({
  name: z.string().min(1).max(200).regex(/^[A-Za-z0-9_.-]+$/),
  content_type: z.string().max(200),
  data_base64: z.string().max(MAX_FRAME_BYTES),
});
export type Asset = z.infer<typeof Asset>;

/** The work this worker's lanes run (WORK_KINDS; unknown names are kept and never match). Absent: any (an older agent). */
const WorkKinds = z.array(z.string().min(1).max(50)).max(32);

/** A random id an agent process draws at start: two processes claiming one worker id differ here. */
const AgentInstance = z.string().regex(/^[0-9a-f]{16,64}$/, 'expected 16 to 64 hex digits');

/** HMAC-SHA256 of the link's challenge (wire/worker-proof.ts), hex. Optional in the schema so a hello without it gets the clear refusal, not a schema error. */
const LinkProof = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 hex digits');

/** Lane-wall thumbnails (README § Live view): the base64 JPEG a `thumb` may carry, at most this many characters. */
export const THUMB_MAX_CHARS = 262_144;
/** Bounds of the `thumbs` interval: no faster than 4 frames/s per lane, no slower than one per 10 s. */
export const THUMB_INTERVAL_MS = { min: 250, max: 10_000 } as const;

export const WorkerMessage = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('hello'), v, worker_id: id, lan_ip: z.string().max(100).optional(), hostname: z.string().max(300).optional(), capabilities: Capabilities, jobs: z.array(HeldJob).max(1024).optional(), results: z.array(PendingResult).max(4096).optional(), fresh: z.boolean().optional(), instance: AgentInstance.optional(), kinds: WorkKinds.optional(), cpu_pct: pct.optional(), mem_pct: pct.optional(), disk_pct: pct.optional(), proof: LinkProof.optional() }),
  z.strictObject({
    type: z.literal('heartbeat'),
    v,
    in_flight: z.number().int().min(0),
    cpu_pct: pct,
    mem_pct: pct,
    disk_pct: pct,
    lanes: z.array(LaneState).max(1024),
    lane_recycles: LaneRecycles.optional(),
  }),
  z.strictObject({ type: z.literal('job_started'), v, job_id: id, assignment_id: id, lane: z.number().int().min(0) }),
  z.strictObject({
    type: z.literal('job_result'),
    v,
    job_id: id,
    assignment_id: id,
    status: z.enum(['succeeded', 'failed', 'canceled']),
    result: ResultValue.optional(),
    error: JobError.optional(),
    assets: z.array(Asset).max(MAX_ASSETS).optional(),
  }),
  z.strictObject({ type: z.literal('job_rejected'), v, job_id: id, assignment_id: id, reason: z.string().max(200) }),
  z.strictObject({ type: z.literal('session_reply'), v, request_id: id, ok: z.boolean(), result: ResultValue.optional(), error: JobError.optional() }),
  z.strictObject({ type: z.literal('session_closed'), v, session_id: id, reason: z.string().max(200) }),
  z.strictObject({ type: z.literal('error'), v, message: z.string().max(MAX_ERROR_CHARS) }),
  /** A graceful stop, said before the link closes: every hub shows the worker offline at once, not after WORKER_TTL. */
  z.strictObject({ type: z.literal('goodbye'), v, reason: z.string().max(200) }),
  /** The worker ended a CDP client's lane (the tunnel closed, the browser exited, it could not start): the lane is clean and free. */
  z.strictObject({ type: z.literal('cdp_closed'), v, cdp_id: id, reason: z.string().max(200) }),
  /** A lane's latest thumbnail (one per lane at most every `interval_ms` of the last `thumbs`); `idle`: the lane shows no page. */
  z.strictObject({ type: z.literal('thumb'), v, lane: z.number().int().min(0), at: z.number().int().min(0), jpeg: z.string().max(THUMB_MAX_CHARS).regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64').optional(), idle: z.literal(true).optional() }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessage>;

/** HubAssignJob: `kind` and `spec` at the top (SPEC: {job_id, kind, spec, deadline}), one variant per runnable kind. */
const assignFields = {
  type: z.literal('assign'),
  v,
  job_id: id,
  assignment_id: id,
  lane: z.number().int().min(0),
  /** Epoch ms after which the worker stops the job and reports `timeout`. */
  deadline: z.number(),
};
const AssignJob = z.discriminatedUnion('kind', [
  z.strictObject({ ...assignFields, kind: z.literal('fetch'), spec: FetchSpec }),
  z.strictObject({ ...assignFields, kind: z.literal('macro'), spec: MacroSpec }),
  z.strictObject({ ...assignFields, kind: z.literal('sleep'), spec: SleepSpec }),
]);

export const HubMessage = z.discriminatedUnion('type', [
  /** The hub's first frame on every link: the worker's hello must prove its id for this nonce. */
  z.strictObject({ type: z.literal('challenge'), v, nonce: z.string().regex(/^[0-9a-f]{64}$/) }),
  z.strictObject({
    type: z.literal('welcome'),
    v,
    worker_id: id,
    hub_id: id,
    heartbeat_s: z.number().positive(),
    status: z.string(),
    /** This link's live-view signing key (base64url); the worker's view server accepts only tokens signed with it. */
    view_key: z.string().min(32).max(200).optional(),
    url_policy: UrlPolicyLists.optional(),
  }),
  AssignJob,
  z.strictObject({ type: z.literal('cancel'), v, job_id: id, reason: z.string().max(200) }),
  z.strictObject({ type: z.literal('result_ack'), v, job_id: id }),
  /**
   * The hub will not store this result as sent: `too_large` (the frame passed MAX_FRAME_BYTES)
   * or `invalid` (the frame is not a valid job_result; `reason` names the field): the worker
   * reports the job failed instead. `not_stored` (the database refused it): the worker tries
   * again a bounded number of times, then gives up.
   */
  z.strictObject({ type: z.literal('result_refused'), v, job_id: id, code: z.enum(['too_large', 'invalid', 'not_stored']), reason: z.string().max(2000), max_bytes: z.number().int().positive().optional() }),
  z.strictObject({ type: z.literal('session_open'), v, request_id: id, session_id: id, lane: z.number().int().min(0), idle_timeout_s: z.number().positive() }),
  z.strictObject({ type: z.literal('session_command'), v, request_id: id, session_id: id, command: SessionCommand }),
  z.strictObject({ type: z.literal('session_close'), v, request_id: id, session_id: id }),
  /**
   * A CDP client holds `lane`: start a fresh browser for it and dial the hub's tunnel
   * (GET /workers/:id/cdp/:cdp_id) with `tunnel_token`, which is good for this worker, lane and client only, once.
   */
  z.strictObject({ type: z.literal('cdp_open'), v, cdp_id: id, lane: z.number().int().min(0), tunnel_token: z.string().regex(/^[0-9a-f]{64}$/), max_s: z.number().positive() }),
  z.strictObject({ type: z.literal('cdp_close'), v, cdp_id: id, reason: z.string().max(200) }),
  z.strictObject({ type: z.literal('status'), v, status: z.enum(['active', 'drain', 'standby']) }),
  z.strictObject({ type: z.literal('error'), v, message: z.string().max(20_000), details: z.unknown().optional() }),
  /** Replace-set: thumbnail exactly these lanes from now on (`[]` stops all; a new link starts with none). */
  z.strictObject({
    type: z.literal('thumbs'),
    v,
    lanes: z.array(z.number().int().min(0)).max(255).refine((l) => new Set(l).size === l.length, 'lanes must be unique'),
    interval_ms: z.number().int().min(THUMB_INTERVAL_MS.min).max(THUMB_INTERVAL_MS.max),
  }),
]);
export type HubMessage = z.infer<typeof HubMessage>;

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string; details: unknown };

function parseWith<T>(schema: z.ZodType<T>, raw: unknown): Parsed<T> {
  let data: unknown;
  if (typeof raw === 'string') {
    try {
      data = JSON.parse(raw);
    } catch {
      return { ok: false, error: 'message is not valid JSON', details: null };
    }
  } else if (raw instanceof Buffer || raw instanceof ArrayBuffer || Array.isArray(raw)) {
    const buf = Array.isArray(raw) ? Buffer.concat(raw as Buffer[]) : Buffer.from(raw as ArrayBuffer);
    return parseWith(schema, buf.toString('utf8'));
  } else {
    data = raw;
  }
  const result = schema.safeParse(data);
  if (result.success) return { ok: true, value: result.data };
  const type = typeof data === 'object' && data !== null ? (data as { type?: unknown }).type : undefined;
  return {
    ok: false,
    error: typeof type === 'string' ? `invalid ${type} message` : 'message has no known type',
    details: issuesToDetails(result.error.issues),
  };
}

export const parseWorkerMessage = (raw: unknown): Parsed<WorkerMessage> => parseWith(WorkerMessage, raw);
export const parseHubMessage = (raw: unknown): Parsed<HubMessage> => parseWith(HubMessage, raw);

type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type WorkerMessageBody = Without<WorkerMessage, 'v'>;
export type HubMessageBody = Without<HubMessage, 'v'>;

/** Serialise with the protocol version stamped on. */
export function encode(msg: WorkerMessageBody | HubMessageBody): string {
  return JSON.stringify({ ...msg, v: PROTOCOL_VERSION });
}
