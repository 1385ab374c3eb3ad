// A hub that refuses a link's upgrade answers plain HTTP (401 with a wrong worker token, 503
// while its hello slots are full or it is stopping) with an `{error, code}` body. ws reports
// only "Unexpected server response: 503", so the agent reads the answer itself and says why it
// re-links, and what to change when waiting will not help.
import type { IncomingMessage } from 'node:http';

/** More than any `{error, code, details}` the hub sends; a larger body is cut, not waited for. */
const BODY_MAX_BYTES = 4096;
/** A hub that sends its status and then nothing does not hold the re-link. */
const BODY_WAIT_MS = 2000;

export interface LinkRefusal {
  status: number;
  code?: string;
  error?: string;
}

/** The refusal's status and, when its body is the hub's JSON error, its code and text. Never rejects. */
export function readRefusal(res: IncomingMessage): Promise<LinkRefusal> {
  const status = res.statusCode ?? 0;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      clearTimeout(timer);
      res.removeAllListeners('data');
      res.destroy();
      resolve({ status, ...errorBody(Buffer.concat(chunks).subarray(0, BODY_MAX_BYTES).toString('utf8')) });
    };
    const timer = setTimeout(done, BODY_WAIT_MS);
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= BODY_MAX_BYTES) done();
    });
    res.once('end', done);
    res.once('error', done);
    res.once('close', done);
  });
}

function errorBody(text: string): { code?: string; error?: string } {
  try {
    const body = JSON.parse(text) as { code?: unknown; error?: unknown };
    return {
      code: typeof body.code === 'string' ? body.code.slice(0, 100) : undefined,
      error: typeof body.error === 'string' ? body.error.slice(0, 300) : undefined,
    };
  } catch {
    return {};
  }
}

/** One log line's text: what the hub said, and what the operator can do about it. */
export function describeRefusal(r: LinkRefusal): string {
  const said = `the hub refused the link: ${r.status}${r.code ? ` ${r.code}` : ''}${r.error ? ` (${r.error})` : ''}`;
  if (r.status === 401) return `${said}; the worker token does not match the hub's PAPRIKA_WORKER_TOKEN: set it with --token or PAPRIKA_WORKER_TOKEN. Re-linking`;
  if (r.code === 'links_waiting') return `${said}; the hub is checking many links at once. Re-linking`;
  if (r.code === 'shutting_down') return `${said}; that hub is stopping. Re-linking (behind nginx the next attempt goes to another hub)`;
  return `${said}. Re-linking`;
}
