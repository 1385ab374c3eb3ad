// A worker frame over MAX_FRAME_BYTES is answered with a refusal the worker acts on, not a
// dropped link: a link closed with 1009 made the worker re-link and send the same result
// again, ~50 times per 30 s, forever (issue 16, reproduction 3). Only the head of the frame is
// read, to name the job: the body is never parsed.
import type { RawData } from 'ws';
import { encode, MAX_FRAME_BYTES } from '../wire/protocol.ts';

const TYPE = /^\s*\{\s*"type"\s*:\s*"([a-z_]{1,40})"/;
const JOB_ID = /"job_id"\s*:\s*"([^"\\]{1,200})"/;

export function frameBytes(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function head(data: RawData, bytes = 4096): string {
  const first = Array.isArray(data) ? Buffer.concat(data.slice(0, 4)) : Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data);
  return first.subarray(0, bytes).toString('utf8');
}

/** The reply to a frame over the limit: `result_refused` when it is a job's result, else an error. */
export function oversizedFrameReply(data: RawData, bytes: number): { text: string; jobId?: string; type?: string } {
  const start = head(data);
  const type = TYPE.exec(start)?.[1];
  const jobId = JOB_ID.exec(start)?.[1];
  const reason = `frame of ${bytes} bytes is over the link's limit of ${MAX_FRAME_BYTES} bytes`;
  if (type === 'job_result' && jobId) return { text: encode({ type: 'result_refused', job_id: jobId, code: 'too_large', reason, max_bytes: MAX_FRAME_BYTES }), jobId, type };
  return { text: encode({ type: 'error', message: reason, details: { code: 'frame_too_large', max_bytes: MAX_FRAME_BYTES, type: type ?? null } }), type };
}
