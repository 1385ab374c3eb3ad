// A background loop with an owner: start() runs a pass every period (or sooner when woken),
// a failing pass logs once and the next one runs, stop() aborts the wait and awaits the pass
// in progress. Nothing keeps the process alive after stop().
import type { Logger } from 'pino';
import type { Clock } from '../ports/clock.ts';

export class PeriodicLoop {
  private abort = new AbortController();
  /** Ends the idle wait in progress, if any (a wake, or stop). */
  private wakeup: AbortController | undefined;
  private running: Promise<void> | undefined;
  private woken = false;

  constructor(
    readonly name: string,
    private readonly periodMs: number,
    private readonly pass: (signal: AbortSignal) => Promise<void>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: { runAtStart?: boolean } = {},
  ) {}

  start(): void {
    if (this.running) return;
    this.running = this.run();
  }

  /** Run the next pass now instead of at the end of the period (the timer stays as the safety net). */
  wake(): void {
    this.woken = true;
    this.wakeup?.abort();
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    if (!this.opts.runAtStart) await this.idle(signal);
    while (!signal.aborted) {
      this.woken = false;
      try {
        await this.pass(signal);
      } catch (err) {
        this.log.warn({ loop: this.name, err: String(err) }, 'loop pass failed; the next one will run');
      }
      if (signal.aborted) break;
      if (!this.woken) await this.idle(signal);
    }
  }

  /**
   * Until the period ends, a wake, or stop: one controller per wait, which both abort. Not
   * AbortSignal.any() over it and the stop signal: a busy loop idles hundreds of times a
   * second, and each combined signal cost more than the wait's own work.
   */
  private async idle(signal: AbortSignal): Promise<void> {
    if (this.woken || signal.aborted) return;
    this.wakeup = new AbortController();
    await this.clock.sleep(this.periodMs, this.wakeup.signal);
    this.wakeup = undefined;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wakeup?.abort();
    await this.running;
    this.running = undefined;
  }
}
