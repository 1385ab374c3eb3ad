// The agent's side of POST /workers/register: with the shared worker token, ask the hub for
// an id and a secret of its own. Retries while the hub is unreachable, busy or rate-limits
// (honouring Retry-After); stops for good when the id is enrolled by someone else.
import type { Logger } from 'pino';
import { backoffMs, fetchFailure, type Random } from 'paprika/wire';
import type { CredentialFile } from './credential-file.ts';

/** The hub will not take this agent's credential: only an operator can fix it. */
export class CredentialRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialRejectedError';
  }
}

/** Registration answered 409 worker_enrolled: the id has a credential this agent does not hold. */
export class WorkerEnrolledError extends CredentialRejectedError {
  constructor(
    readonly workerId: string,
    message: string,
  ) {
    super(message);
  }
}

export function resetHint(workerId: string): string {
  return `An operator must reset its credentials (console: the worker's "Reset credentials" button, or POST /admin/workers/${workerId}/reset-credentials with the admin token), then start this worker again.`;
}

export interface EnrollOptions {
  hubUrl: string;
  lanIp: string;
  hostname: string;
  workerId?: string;
  headers: Record<string, string>;
  log: Logger;
  random: Random;
  backoff: { baseMs: number; capMs: number };
  stopped: () => boolean;
}

const MAX_RETRY_AFTER_MS = 120_000;

/**
 * The stored credential; without one (or with `renew`: the hub forgot the id), a new
 * enrollment, saved before it is used, so a restart never enrolls twice.
 */
export async function obtainCredential(file: CredentialFile, o: EnrollOptions, opts: { renew?: boolean } = {}): Promise<{ worker_id: string; secret: string }> {
  if (opts.renew) file.remove();
  const stored = opts.renew ? undefined : file.load();
  if (stored) return stored;
  file.ensureWritable();
  const c = await enroll(o).catch((err: unknown) => {
    const elsewhere = err instanceof WorkerEnrolledError ? file.sameWorkerElsewhere(err.workerId) : undefined;
    if (!elsewhere) throw err;
    throw new CredentialRejectedError(
      `worker ${(err as WorkerEnrolledError).workerId} is already enrolled at ${o.hubUrl}, and this data dir holds its credential from ${elsewhere.hub} (${elsewhere.path}). ` +
        `If ${o.hubUrl} reaches the same fleet (the same Postgres: another of its hubs, or nginx in front of them), use that credential: cp ${elsewhere.path} ${file.path} and start the worker again. Otherwise: ${resetHint((err as WorkerEnrolledError).workerId)}`,
    );
  });
  file.save({ hub: new URL(o.hubUrl).origin, worker_id: c.worker_id, secret: c.secret, lan_ip: o.lanIp, enrolled_at: new Date().toISOString() });
  o.log.info({ worker_id: c.worker_id, credential: file.path }, 'enrolled with the hub');
  return c;
}

export async function enroll(o: EnrollOptions): Promise<{ worker_id: string; secret: string }> {
  for (let attempt = 0; ; attempt++) {
    let waitMs = backoffMs(attempt, o.backoff.baseMs, o.backoff.capMs, o.random);
    try {
      const res = await fetch(new URL('/workers/register', o.hubUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...o.headers },
        body: JSON.stringify({ lan_ip: o.lanIp, hostname: o.hostname, ...(o.workerId ? { worker_id: o.workerId } : {}) }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json().catch(() => ({}))) as { worker_id?: string; secret?: string; error?: string; code?: string; details?: { worker_id?: string } };
      if (res.ok && body.worker_id && body.secret) return { worker_id: body.worker_id, secret: body.secret };
      if (res.status === 409 && body.code === 'worker_enrolled') {
        const id = body.details?.worker_id ?? o.workerId ?? o.lanIp;
        throw new WorkerEnrolledError(id, `worker ${id} is already enrolled at ${o.hubUrl} with another secret (another agent on this host with the same --lan-ip and another --data-dir: give each agent its own --worker-id; or this machine's credential file is lost, or the id belongs to another machine). ${resetHint(id)}`);
      }
      if (res.status === 429) {
        waitMs = Math.min(MAX_RETRY_AFTER_MS, Math.max(waitMs, Number(res.headers.get('retry-after') ?? 1) * 1000));
        o.log.warn({ retry_in_ms: waitMs }, 'registration rate-limited by the hub; waiting');
      } else if (res.status >= 400 && res.status < 500) {
        const hint = res.status === 401 || res.status === 403 ? ` (the agent's --token / PAPRIKA_WORKER_TOKEN must be the hub's PAPRIKA_WORKER_TOKEN)` : '';
        throw new CredentialRejectedError(`hub refused registration (${res.status}): ${body.error ?? 'unknown error'}${hint}`);
      } else {
        o.log.warn({ status: res.status }, 'registration failed; retrying');
      }
    } catch (err) {
      if (err instanceof CredentialRejectedError) throw err;
      const why = fetchFailure(err);
      o.log.warn({ hub: o.hubUrl, err: why }, `hub unreachable for registration at ${o.hubUrl} (${why}); retrying`);
    }
    if (o.stopped()) throw new Error('agent stopped');
    await new Promise((r) => setTimeout(r, waitMs));
  }
}
