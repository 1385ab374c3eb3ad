// The start of a worker link: the hello must prove the worker's id for this link's nonce;
// then the link is built, the work the worker still holds is adopted (or cancelled), the jobs
// it lost are settled by the ledger, an older link of the same worker is replaced, the
// owner key is taken and the welcome sent.
import type { WorkerMessage } from '../wire/protocol.ts';
import { encode } from '../wire/protocol.ts';
import type { LinkDeps } from './link-deps.ts';
import { WorkerLink, type LinkSocket } from './worker-link.ts';

/** Close code of a link whose hello did not prove its worker id (the HTTP 401 of links). */
export const LINK_UNAUTHORIZED = 4401;
/** Close code of a hello for an id another running agent holds a live link for (the 409 of links). */
export const LINK_ID_IN_USE = 4409;
/** How long the current link of an id has to answer a ping before a different agent may take the id over. */
const LIVE_LINK_PING_MS = 2000;
/** Close code of a hello for an id whose take-over is being checked by another hello (WebSocket: try again later). */
const LINK_TRY_AGAIN = 1013;

type Hello = Extract<WorkerMessage, { type: 'hello' }>;

/** Frames before a link exists: the challenge and error replies. */
export function sendChallenge(socket: LinkSocket, nonce: string): void {
  socket.send(encode({ type: 'challenge', nonce })).catch(() => {});
}
export function sendError(socket: LinkSocket, message: string, details?: unknown): Promise<void> {
  return socket.send(encode({ type: 'error', message, ...(details === undefined ? {} : { details }) })).catch(() => {});
}

export class LinkHandshake {
  /** Ids whose current link is being pinged for a take-over: one check per id at a time. */
  private readonly takeoverChecks = new Set<string>();

  constructor(private readonly d: LinkDeps) {}

  /**
   * The first frame of a link: 'linked' once welcomed; 'refused' when the hello did not prove
   * the id (the socket is closed with LINK_UNAUTHORIZED; later frames are ignored); 'failed'
   * when linking broke (closed with 1011). `created` learns of the link before any await that
   * follows its creation, so a socket closing mid-hello is still cleaned up.
   */
  async hello(socket: LinkSocket, workerId: string, nonce: string, msg: Hello, remote: string | undefined, created: (link: WorkerLink) => void, proven: () => void = () => {}): Promise<'linked' | 'refused' | 'failed'> {
    try {
      const verdict = await this.d.enrollment.verifyLink(workerId, nonce, msg.proof);
      if (!verdict.ok) {
        this.d.log.warn({ worker_id: workerId, code: verdict.code, remote }, 'link refused: the hello did not prove the worker id');
        await sendError(socket, verdict.message, { code: verdict.code });
        socket.close(LINK_UNAUTHORIZED, verdict.code);
        return 'refused';
      }
      proven();
      if (await this.heldByAnotherAgent(socket, workerId, msg.instance, remote)) return 'refused';
      await this.link(socket, msg, this.claimedAddress(msg, verdict.lanIp, remote), created);
      return 'linked';
    } catch (err) {
      // Without a welcome the worker would wait forever: close, and it links again with backoff.
      this.d.log.warn({ worker_id: workerId, err: String(err) }, 'hello failed; closing the link');
      socket.close(1011, 'hello failed');
      // An old link this hello superseded is dead (the worker holds one link at a time):
      // close it too rather than keep it, unpickable, until the worker's next hello.
      const old = this.d.localLinks.get(workerId);
      if (old?.superseded) old.close(4001, 'replaced by a new link');
      return 'failed';
    }
  }

  /**
   * Two agents with one id (two on a host with the same --lan-ip and data dir) knocked each
   * other off every ~200 ms, forever, saying nothing. A hello from a different agent process
   * than the current link's is refused while that link answers a ping; the same process
   * re-linking, or a new one replacing a dead link (no pong), takes over at once as before.
   */
  private async heldByAnotherAgent(socket: LinkSocket, workerId: string, instance: string | undefined, remote: string | undefined): Promise<boolean> {
    const current = this.d.localLinks.get(workerId);
    if (!current || current.isOn(socket) || current.superseded || current.left_at_ms !== null) return false;
    if (!instance || !current.instance || current.instance === instance) return false;
    // One take-over check per id: a holder of one credential who sent hello after hello for
    // its own id, on a link that never answers pings, kept each waiting LIVE_LINK_PING_MS.
    if (this.takeoverChecks.has(workerId)) {
      this.d.log.warn({ worker_id: workerId, remote }, 'link refused: a take-over of this worker id is already being checked');
      await sendError(socket, `a hello for worker ${workerId} from another agent is being checked; try again`, { code: 'takeover_in_progress', worker_id: workerId });
      socket.close(LINK_TRY_AGAIN, 'takeover_in_progress');
      return true;
    }
    this.takeoverChecks.add(workerId);
    let answers: boolean;
    try {
      answers = await current.answersPing(LIVE_LINK_PING_MS);
    } finally {
      this.takeoverChecks.delete(workerId);
    }
    if (!answers) return false;
    const message = `worker id ${workerId} is in use by another running agent (linked from ${current.meta.lanIp || 'another address'}); give each agent on one host its own --worker-id (and --data-dir), or its own --lan-ip`;
    this.d.log.warn({ worker_id: workerId, remote, current_instance: current.instance, refused_instance: instance }, 'link refused: the worker id is in use by another agent');
    await sendError(socket, message, { code: 'worker_id_in_use', worker_id: workerId });
    socket.close(LINK_ID_IN_USE, 'worker_id_in_use');
    return true;
  }

  /**
   * The address the link publishes is the one the id was enrolled for, never the hello's: the
   * published row's lan_ip is the id's claim in Redis (claimWorkerId.lua), and a hello naming
   * another address moved the claim, so the enrolled address was handed a second id at its next
   * registration. The registration's claim stands; a hello that says otherwise is only logged.
   */
  private claimedAddress(msg: Hello, enrolled: string, remote: string | undefined): string {
    if (msg.lan_ip !== undefined && msg.lan_ip !== enrolled) {
      this.d.log.warn({ worker_id: msg.worker_id, enrolled_lan_ip: enrolled, hello_lan_ip: msg.lan_ip, remote }, 'hello names another lan_ip than the id was enrolled with; the enrolled one is kept');
    }
    return enrolled;
  }

  private async link(socket: LinkSocket, msg: Hello, lanIp: string, created: (link: WorkerLink) => void): Promise<WorkerLink> {
    const { config, store, registry, localLinks, lanes, clock } = this.d;
    const helloAt = new Date(clock.now());
    // The worker holds one link at a time: from now on a job sent over the old one would be
    // lost until the next hello, so the old one takes no more work.
    const old = localLinks.get(msg.worker_id);
    if (old && !old.isOn(socket)) old.supersede();
    const status = (await store.getWorkerStatus(msg.worker_id)) ?? 'active';
    const link = new WorkerLink(msg.worker_id, socket, msg.capabilities, { lanIp, hostname: msg.hostname ?? '', hubId: config.hubId }, status, clock.now(), { kinds: msg.kinds, instance: msg.instance });
    link.report(msg);
    created(link);
    // Work the worker still holds from before a reconnect stays with it (the seed's 300 s
    // grace exists for exactly this), unless the job ended meanwhile: then it is cancelled.
    for (const held of msg.jobs ?? []) {
      const row = await store.getJob(held.job_id);
      if (row?.status === 'running' && row.session_id === held.assignment_id && row.worker_id === msg.worker_id) {
        lanes.adopt(link, held.lane, { kind: 'job', id: held.job_id, assignmentId: held.assignment_id });
      } else {
        await link.cancel(held.job_id, 'job is no longer running on this worker');
      }
    }
    const known = new Set([...(msg.jobs ?? []).map((j) => j.assignment_id), ...(msg.results ?? []).map((r) => r.assignment_id)]);
    await this.d.ledger.settleRelinked(link, { known, fresh: msg.fresh !== false, helloAt });
    // A link that closed during its hello must not replace (and close) a newer, working one.
    if (!socket.open) throw new Error('link closed during hello');
    const previous = localLinks.add(link);
    if (previous && previous !== link) previous.close(4001, 'replaced by a new link');
    lanes.offer(link.freeLaneCount);
    // A stalled Redis must not refuse the link: the next heartbeat's flush writes the owner too.
    await registry.setOwner(msg.worker_id, config.hubId).catch((err: unknown) => this.d.log.warn({ worker_id: msg.worker_id, err: String(err) }, 'owner key not written; the next heartbeat writes it'));
    this.d.publisher.mark(link);
    this.d.recycles.hello(msg.worker_id, msg.fresh !== false);
    await link.welcome({ worker_id: msg.worker_id, hub_id: config.hubId, heartbeat_s: config.heartbeatS, status, view_key: link.view_key, url_policy: this.d.urls.lists() });
    this.d.metrics.localWorkers.set(localLinks.size);
    this.d.log.info({ worker_id: msg.worker_id, lanes: msg.capabilities.max_concurrent, status, adopted: link.in_flight }, 'worker linked');
    this.d.events.workersChanged();
    return link;
  }
}
