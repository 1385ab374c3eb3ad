// Worker identity: the shared PAPRIKA_WORKER_TOKEN only enrolls; each enrolled id gets a
// secret of its own, and every link proves it (wire/worker-proof.ts). One service owns the
// credential's whole life: registration (rate-limited), the proof at each link, the
// operator's reset, and the expiry of enrollments that never linked.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { sourceOf } from '../domain/source-address.ts';
import { proofMatches, secretMatches, secretVerifier } from '../wire/worker-proof.ts';
import { PaprikaError } from '../wire/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import type { Registry } from '../ports/registry.ts';
import { RegistrationLimiter } from './registration-limiter.ts';

/**
 * An enrollment that has not linked within this long is deleted (and its IP-derived id given
 * back): a registration is meant to be followed by a link within seconds, and without a
 * bound, fake registrations would hold ids and rows forever.
 */
export const ENROLLMENT_TTL_S = 3600;
const EXPIRE_BATCH = 1000;

export interface RegisterRequest {
  lan_ip: string;
  hostname: string;
  /** An explicit id (`paprika worker --worker-id`), instead of the one derived from lan_ip. */
  worker_id?: string;
  /** The id's current secret: re-registering an enrolled id needs it (it is kept, not rotated). */
  secret?: string;
}

/** `lanIp`: the address the id was enrolled (and its Redis claim made) for. */
export type LinkVerdict = { ok: true; lanIp: string } | { ok: false; code: 'worker_not_enrolled' | 'worker_proof_invalid'; message: string };

export class WorkerEnrollment {
  private readonly limiter: RegistrationLimiter;

  constructor(private readonly d: { config: Config; store: JobStore; registry: Registry; clock: Clock; log: Logger }) {
    this.limiter = new RegistrationLimiter(d.config, d.clock);
  }

  /** POST /workers/register, after the worker token was checked. `source` is the caller's IP. */
  async register(req: RegisterRequest, source: string): Promise<{ worker_id: string; secret: string; created: boolean }> {
    const { store, registry, clock, log } = this.d;
    const verdict = this.limiter.take(sourceOf(source));
    if (!verdict.ok) {
      log.warn({ source, scope: verdict.scope }, 'registration refused: rate limited');
      throw new PaprikaError('rate_limited', { scope: verdict.scope, per_min: verdict.limit.ratePerMin, burst: verdict.limit.burst, retry_after_s: verdict.retryAfterS }, undefined, verdict.retryAfterS);
    }
    const workerId = await this.claimId(req);
    const secret = randomBytes(32).toString('hex');
    const created = await store.credentials.insert({ worker_id: workerId, secret_hash: secretVerifier(secret), lan_ip: req.lan_ip, hostname: req.hostname, created_at: new Date(clock.now()) });
    if (created) {
      log.info({ worker_id: workerId, lan_ip: req.lan_ip, hostname: req.hostname, source }, 'worker enrolled');
      return { worker_id: workerId, secret, created: true };
    }
    const existing = await store.credentials.get(workerId);
    if (existing && secretMatches(existing.secret_hash, req.secret)) {
      log.info({ worker_id: workerId, lan_ip: req.lan_ip, source }, 'worker re-registered with its secret');
      return { worker_id: workerId, secret: req.secret!, created: false };
    }
    // Someone with the worker token asked for an id another agent holds: the squatting of
    // the finding. The holder keeps it; only its secret or an operator's reset frees it.
    log.warn({ worker_id: workerId, lan_ip: req.lan_ip, source, secret_presented: req.secret !== undefined }, 'registration refused: id already enrolled');
    throw new PaprikaError('worker_enrolled', { worker_id: workerId, reset: `POST /admin/workers/${workerId}/reset-credentials` });
  }

  /** An explicit id is claimed by the IP rule too: an id another IP holds is not handed over. */
  private async claimId(req: RegisterRequest): Promise<string> {
    try {
      return await (req.worker_id ? this.d.registry.claimWorkerId(req.lan_ip, req.hostname, [req.worker_id]) : this.d.registry.claimWorkerId(req.lan_ip, req.hostname));
    } catch (err) {
      if (!(err instanceof Error && err.message.startsWith('no worker id left'))) throw err;
      if (req.worker_id) throw new PaprikaError('conflict', { worker_id: req.worker_id }, `worker id ${req.worker_id} is held by another address`);
      // Every id this address derives is held by another address (it answered 500).
      throw new PaprikaError('conflict', { lan_ip: req.lan_ip }, `every worker id for ${req.lan_ip} is held by another address: give one with --worker-id`);
    }
  }

  /**
   * The proof in a link's hello, for the nonce this hub sent on that link. Throws when the
   * database cannot answer (the link closes as a failed hello and the worker tries again).
   */
  async verifyLink(workerId: string, nonce: string, proof: string | undefined): Promise<LinkVerdict> {
    const cred = await this.d.store.credentials.get(workerId);
    if (!cred) return { ok: false, code: 'worker_not_enrolled', message: `worker ${workerId} has no credential at this hub; register first` };
    if (!proofMatches(cred.secret_hash, nonce, workerId, proof)) {
      return { ok: false, code: 'worker_proof_invalid', message: proof ? `wrong proof for worker ${workerId}` : `hello for ${workerId} carries no proof` };
    }
    await this.d.store.credentials.markLinked(workerId, new Date(this.d.clock.now()));
    return { ok: true, lanIp: cred.lan_ip };
  }

  /** Operator action: the id may be registered again (audited with the actor). A live link stays up. */
  async resetCredentials(workerId: string, actor: string): Promise<boolean> {
    const gone = await this.d.store.credentials.reset(workerId, actor, new Date(this.d.clock.now()));
    this.d.log.warn({ worker_id: workerId, actor, had_credential: Boolean(gone) }, 'worker credentials reset');
    return Boolean(gone);
  }

  /** One pass (the reconciler's): enrollments older than ENROLLMENT_TTL_S that never linked go. */
  async expireUnused(): Promise<number> {
    const { store, registry, clock, log } = this.d;
    const gone = await store.credentials.deleteUnlinkedBefore(new Date(clock.now() - ENROLLMENT_TTL_S * 1000), EXPIRE_BATCH);
    for (const c of gone) {
      const released = await registry.releaseWorkerIdIfUnlinked(c.worker_id, c.lan_ip).catch((err: unknown) => {
        log.warn({ worker_id: c.worker_id, err: String(err) }, 'could not release the id of an expired enrollment');
        return false;
      });
      log.info({ worker_id: c.worker_id, lan_ip: c.lan_ip, id_released: released }, 'unused enrollment expired');
    }
    return gone.length;
  }
}
