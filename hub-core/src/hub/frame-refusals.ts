// A job's result the hub cannot take is answered with a refusal the worker acts on (it reports
// the job failed instead), not a dropped link or a bare error: either made the worker send the
// same result again, forever, while its job held the lane.
// - A frame over MAX_FRAME_BYTES: a link closed with 1009 made the worker re-link and resend
//   ~50 times per 30 s (issue 16, reproduction 3). Only its head is read, to name the job.
// - A job_result the schema refuses (a field past its bound): a bare error changed nothing.
import type { RawData } from 'ws';
import { encode, MAX_FRAME_BYTES } from '../wire/protocol.ts';

const TYPE = /^\s*\{\s*"type"\s*:\s*"([a-z_]{1,40})"/;
const JOB_ID = /"job_id"\s*:\s*"([^"\\]{1,200})"/;
const REQUEST_ID = /"request_id"\s*:\s*"([^"\\]{1,200})"/;

export function frameBytes(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function head(data: RawData, bytes = 4096): string {
  const first = Array.isArray(data) ? Buffer.concat(data.slice(0, 4)) : Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data);
  return first.subarray(0, bytes).toString('utf8');
}

/**
 * The reply to a job_result that is not valid (`error`/`details` from the schema), naming what
 * failed; undefined for any other frame (those get an error reply).
 */
export function unreadableResultReply(data: RawData, details: unknown): string | undefined {
  const start = head(data);
  const jobId = TYPE.exec(start)?.[1] === 'job_result' ? JOB_ID.exec(start)?.[1] : undefined;
  if (!jobId) return undefined;
  const issues = Array.isArray(details) ? (details as Array<{ path: string; message: string }>) : [];
  const what = issues.map((i) => `${i.path}: ${i.message}`).join('; ') || 'not a valid job_result';
  const reason = `the result is not valid as sent (${what})`.slice(0, 2000);
  return encode({ type: 'result_refused', job_id: jobId, code: 'invalid', reason });
}

/**
 * The reply to a frame over the limit: `result_refused` when it is a job's result, else an error.
 * A session command's reply names its `requestId`: the hub answers the waiting client at once.
 */
export function oversizedFrameReply(data: RawData, bytes: number): { text: string; jobId?: string; requestId?: string; reason: string; type?: string } {
  const start = head(data);
  const type = TYPE.exec(start)?.[1];
  const jobId = JOB_ID.exec(start)?.[1];
  const reason = `frame of ${bytes} bytes is over the link's limit of ${MAX_FRAME_BYTES} bytes`;
  if (type === 'job_result' && jobId) return { text: encode({ type: 'result_refused', job_id: jobId, code: 'too_large', reason, max_bytes: MAX_FRAME_BYTES }), jobId, reason, type };
  return { text: encode({ type: 'error', message: reason, details: { code: 'frame_too_large', max_bytes: MAX_FRAME_BYTES, type: type ?? null } }), requestId: requestIdIn(start), reason, type };
}

/** The request a session_reply frame answers, read from its head (for a reply the hub cannot take). */
export function sessionReplyRequestId(data: RawData): string | undefined {
  return requestIdIn(head(data));
}

function requestIdIn(start: string): string | undefined {
  return TYPE.exec(start)?.[1] === 'session_reply' ? REQUEST_ID.exec(start)?.[1] : undefined;
}
