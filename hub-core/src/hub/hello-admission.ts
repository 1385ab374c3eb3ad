// Which worker-link sockets may wait for their hello (pending-hellos.ts decides), counted per
// source as the hub sees it (an IPv6 /64 is one), with what a crowded bound did in the metrics
// and, at most twice in LOG_MS, in the log.
import { sourceOf } from '../domain/source-address.ts';
import type { LinkDeps } from './link-deps.ts';
import { PendingHellos, type Admission } from './pending-hellos.ts';

/** Cut or refused sockets are logged at most once in this long, then once more for the rest of it (a flood must not flood the log too). */
const LOG_MS = 10_000;

export class HelloAdmission {
  private readonly pending: PendingHellos;
  private crowding = { evicted: 0, refused: 0 };
  private logWindowOpen = false;

  constructor(private readonly d: Pick<LinkDeps, 'config' | 'metrics' | 'log' | 'clock'>) {
    this.pending = new PendingHellos({ max: d.config.linkPendingMax, perSource: d.config.linkPendingPerIp });
  }

  /**
   * A slot among the sockets waiting for their hello (PAPRIKA_LINK_PENDING_MAX,
   * PAPRIKA_LINK_PENDING_PER_IP), held until the hello linked the worker or the socket is gone.
   * A full bound cuts a socket being closed unlinked, else its oldest silent one (`cut` is how
   * this one would be cut); refused only when every slot holds a hello being checked: the
   * caller answers 503.
   */
  admit(remote: string | undefined, cut: () => void): Admission {
    const admission = this.pending.take(sourceOf(remote), cut);
    const outcome = admission.ok ? (admission.evicted > 0 ? 'evicted' : undefined) : 'refused';
    if (outcome) {
      const n = admission.ok ? admission.evicted : 1;
      this.d.metrics.helloSockets.inc({ outcome }, n);
      this.note(outcome, n, remote);
    }
    return admission;
  }

  /** Sockets upgraded (or upgrading) whose hello has not linked them yet. */
  get waiting(): number {
    return this.pending.waiting;
  }

  private note(outcome: 'evicted' | 'refused', n: number, remote: string | undefined): void {
    this.crowding[outcome] += n;
    if (this.logWindowOpen) return;
    this.flush(remote);
    this.logWindowOpen = true;
    this.d.clock.setTimer(LOG_MS, () => {
      this.logWindowOpen = false;
      if (this.crowding.evicted + this.crowding.refused > 0) this.flush(undefined);
    });
  }

  private flush(remote: string | undefined): void {
    this.d.log.warn({ remote, evicted: this.crowding.evicted, refused: this.crowding.refused, metric: 'paprika_link_hello_sockets_total' }, 'worker-link sockets awaiting their hello are at their bound: the longest silent ones cut to make room (refused only while every slot holds a hello being checked)');
    this.crowding = { evicted: 0, refused: 0 };
  }
}
