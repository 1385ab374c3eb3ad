// A result's size is decided by the worker, before it is sent (PAPRIKA_MAX_RESULT_BYTES): an
// inline value over 256 KB travels as the asset `result.json`, and a result still over the cap
// becomes `failed: result too large`, naming its largest part. A 40 MB result once made the
// hub drop the link, and the worker re-sent it after every re-link, forever.
import { boundedError, encode, MAX_ASSETS, MAX_ERROR_CHARS, MAX_RESULT_DEPTH, nestedDeeperThan, type WorkerMessageBody } from 'paprika/wire';

type JobResult = Extract<WorkerMessageBody, { type: 'job_result' }>;
type SessionReply = Extract<WorkerMessageBody, { type: 'session_reply' }>;

/** Inline JSON past this goes to an asset: job rows and lists stay small. */
export const INLINE_RESULT_MAX_BYTES = 256 * 1024;
export const RESULT_ASSET = 'result.json';

export function frameSize(msg: WorkerMessageBody): number {
  return Buffer.byteLength(encode(msg), 'utf8');
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** The bytes a base64 text decodes to (an asset's size as stored). */
export const base64Bytes = (b64: string) => Math.floor((b64.length * 3) / 4);

/** What a result or reply that JSON.stringify refused (past V8's longest string, a BigInt) is reported as. */
const unserialisable = (err: unknown) => `result cannot be serialised (${err instanceof Error ? err.message : String(err)}): return less`;

/**
 * The result as it may be sent: unchanged, its value moved to an asset, or `failed: result too
 * large`. Never throws: a result too big to serialise at all (past V8's longest string, ~512 MB
 * summed over a macro's values) once threw here, uncaught, and took the whole agent down.
 */
export function capResult(r: JobResult, maxBytes: number): JobResult {
  try {
    return capSerialisable(r, maxBytes);
  } catch (err) {
    return { type: 'job_result', job_id: r.job_id, assignment_id: r.assignment_id, status: 'failed', error: unserialisable(err) };
  }
}

function capSerialisable(r: JobResult, maxBytes: number): JobResult {
  if (r.error !== undefined && r.error.length > MAX_ERROR_CHARS) r = { ...r, error: boundedError(r.error) };
  let out = r;
  // The hub refuses it as invalid (it walks a result recursively); said here in the job's own words.
  if (r.result !== undefined && r.result !== null && nestedDeeperThan(r.result, MAX_RESULT_DEPTH)) return { type: 'job_result', job_id: r.job_id, assignment_id: r.assignment_id, status: 'failed', error: `result nested deeper than ${MAX_RESULT_DEPTH} levels of arrays and objects: return less` };
  if (r.result !== undefined && r.result !== null) {
    const json = JSON.stringify(r.result);
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > INLINE_RESULT_MAX_BYTES) {
      const asset = { name: RESULT_ASSET, content_type: 'application/json', data_base64: Buffer.from(json, 'utf8').toString('base64') };
      out = { ...r, result: { result_asset: RESULT_ASSET, bytes }, assets: [...(r.assets ?? []).filter((a) => a.name !== RESULT_ASSET), asset] };
    }
  }
  // More assets than the link takes (no valid job makes that many): refused as sent, it would come back forever.
  const count = out.assets?.length ?? 0;
  if (count > MAX_ASSETS) return { type: 'job_result', job_id: r.job_id, assignment_id: r.assignment_id, status: 'failed', error: `result has ${count} assets, over the limit of ${MAX_ASSETS}` };
  const size = frameSize(out);
  if (size <= maxBytes) return out;
  const parts = (out.assets ?? []).map((a) => ({ name: a.name, bytes: base64Bytes(a.data_base64) }));
  const largest = parts.sort((a, b) => b.bytes - a.bytes)[0];
  return { type: 'job_result', job_id: r.job_id, assignment_id: r.assignment_id, status: 'failed', error: tooLarge(size, maxBytes, largest) };
}

/** `result too large: …` naming the size, the cap and the largest part (with advice for a screenshot). */
export function tooLarge(size: number, maxBytes: number, largest?: { name: string; bytes: number }): string {
  const what = largest ? `; its largest part is ${largest.name} (${mb(largest.bytes)})${largest.name.endsWith('.png') ? ': take a smaller screenshot (no full_page, or a smaller viewport)' : ''}` : '';
  return `result too large: ${mb(size)} is over PAPRIKA_MAX_RESULT_BYTES (${mb(maxBytes)})${what}`;
}

/**
 * A session command's reply as it may be sent: over the cap it becomes an error naming the size
 * (the client's request answers at once). Sent as it was, a reply over the link's limit was
 * refused by the hub, and the client waited PAPRIKA_FORWARD_TIMEOUT_S for nothing.
 */
export function capSessionReply(r: SessionReply, maxBytes: number): SessionReply {
  if (!r.ok) return r;
  let size: number;
  try {
    size = frameSize(r);
  } catch (err) {
    return { type: 'session_reply', request_id: r.request_id, ok: false, error: unserialisable(err) };
  }
  if (size <= maxBytes) return r;
  return { type: 'session_reply', request_id: r.request_id, ok: false, error: `${tooLarge(size, maxBytes)}; return less (a selector's text, not the page; no full_page screenshot)` };
}
