// Forward or serve here: the one-hop rules between hubs, in one place. A request another hub
// forwarded (X-Paprika-Forwarded) is never forwarded again; a request this hub cannot serve
// goes to the hub that can (the owner of a worker's link or of a session) or, for new work,
// to the live peer with the most free lanes.
import type { Config } from '../config.ts';
import { PaprikaError } from '../wire/errors.ts';
import type { JobRow } from '../ports/job-store.ts';
import { RegistryUnavailableError, type Registry } from '../ports/registry.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { Forwarder, ForwardResponse } from './forwarder.ts';
import { WORK_KINDS, type WorkKind } from '../wire/work-kinds.ts';

/** A job's kind as work a lane runs; a rerun's is known only once resolved (any, here). */
function workKindOf(kind: string): WorkKind | undefined {
  return (WORK_KINDS as readonly string[]).includes(kind) ? (kind as WorkKind) : undefined;
}

/** How a request reached this hub: forwarded by a peer or not, and the caller's Authorization. */
export interface Hop {
  forwarded: boolean;
  auth: Record<string, string>;
}

export interface PeerRoutingDeps {
  config: Pick<Config, 'hubId'>;
  registry: Pick<Registry, 'getOwner' | 'getSessionOwner'>;
  forwarder: Pick<Forwarder, 'hubUrl' | 'bestPeer' | 'forward'>;
  jobs: { getJob(id: string): Promise<JobRow | undefined> };
  dispatcher: Pick<Dispatcher, 'assign'>;
}

export type TakeForwardedJob = { kind: 'not_found' } | { kind: 'answered'; job: JobRow } | { kind: 'no_free_lane'; outcome: string };

export class PeerRouting {
  constructor(private readonly d: PeerRoutingDeps) {}

  /** The URL of the live hub that holds this worker's link, when it is another hub. */
  async workerOwnerUrl(workerId: string): Promise<string | undefined> {
    // Redis stalled: the caller answers 503 and is retried ("applied by nobody" would be untrue).
    const owner = await this.d.registry.getOwner(workerId).catch((err: unknown) => {
      if (err instanceof RegistryUnavailableError) throw err;
      return undefined;
    });
    return owner && owner !== this.d.config.hubId ? this.d.forwarder.hubUrl(owner) : undefined;
  }

  /** A new job no local lane took: one hop to the peer with the most free lanes for its kind. Its answer, or undefined (the job stays queued here). */
  async placeOnPeer(job: JobRow, hop: Hop): Promise<unknown> {
    if (hop.forwarded || job.status !== 'queued') return undefined;
    const peer = await this.d.forwarder.bestPeer(workKindOf(job.kind)).catch(() => undefined);
    if (!peer) return undefined;
    const res = await this.d.forwarder.forward('jobs.assign', peer.url, 'POST', `/internal/jobs/${job.id}/assign`, {}).catch(() => undefined);
    return res?.status === 200 ? res.body : undefined;
  }

  /** A peer's forwarded job: assigned here if a local lane is free (never forwarded again); `answered` carries the row to return (assigned here, or no longer queued). */
  async takeForwardedJob(id: string): Promise<TakeForwardedJob> {
    const job = await this.d.jobs.getJob(id);
    if (!job) return { kind: 'not_found' };
    if (job.status !== 'queued') return { kind: 'answered', job };
    const out = await this.d.dispatcher.assign(job, 'inline');
    return out.kind === 'assigned' ? { kind: 'answered', job: out.job } : { kind: 'no_free_lane', outcome: out.kind };
  }

  /** A job canceled here whose worker runs on another hub's link: that hub passes the cancel on. */
  async cancelAtOwner(job: JobRow, sentToWorker: boolean, hop: Hop): Promise<void> {
    if (job.status !== 'canceled' || sentToWorker || !job.worker_id || hop.forwarded) return;
    // The cancel is committed: a Redis that stalls now must not turn its answer into a 503 (the
    // worker's late result is ignored either way; telling it only frees the lane sooner).
    const url = await this.workerOwnerUrl(job.worker_id).catch(() => undefined);
    if (url) await this.d.forwarder.forward('jobs.cancel', url, 'POST', `/internal/jobs/${job.id}/cancel-on-worker`, {}).catch(() => undefined);
  }

  /** No free lane here for a new session: the peer with the most free lanes opens it, or undefined. */
  async openSessionOnPeer(body: unknown, hop: Hop): Promise<ForwardResponse | undefined> {
    if (hop.forwarded) return undefined;
    const peer = await this.d.forwarder.bestPeer('session').catch(() => undefined);
    return peer ? this.d.forwarder.forward('sessions.open', peer.url, 'POST', '/sessions', body, hop.auth) : undefined;
  }

  /** A session this hub does not hold: the request, forwarded once to the hub that does. */
  async toSessionOwner(id: string, hop: Hop, request: { method: string; path: string; body: unknown }): Promise<ForwardResponse> {
    if (hop.forwarded) throw new PaprikaError('not_found', { session_id: id }, 'No such session');
    const owner = await this.d.registry.getSessionOwner(id);
    if (!owner) throw new PaprikaError('not_found', { session_id: id }, 'No such session');
    if (owner === this.d.config.hubId) throw new PaprikaError('not_found', { session_id: id }, 'Session ended');
    const url = await this.d.forwarder.hubUrl(owner);
    if (!url) throw new PaprikaError('bad_gateway', { session_id: id, owner }, 'The hub owning this session is not alive');
    return this.d.forwarder.forward('sessions', url, request.method, request.path, request.body, hop.auth);
  }
}
