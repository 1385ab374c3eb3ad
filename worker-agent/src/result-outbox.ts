// The results a hub has not acked yet. A job's result is the one thing a worker must not lose:
// it stays here from the job's end until a hub acks it (stored) or refuses it for good, and is
// sent again after every re-link and whenever it sat unacked for a heartbeat period (the hub
// could not write it, e.g. while Postgres restarted). A repeat changes nothing at the hub.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { boundedError, encode, makeDirs, MAX_FRAME_BYTES, writeFileWhole, type HubMessage, type WorkerMessageBody } from 'paprika/wire';
import { capResult, frameSize } from './result-cap.ts';

export type JobResult = Extract<WorkerMessageBody, { type: 'job_result' }>;
type Refusal = Extract<HubMessage, { type: 'result_refused' }>;
/** `sending` until the socket has taken the whole frame: a big result is not queued again behind itself. */
type Entry = { result: JobResult; sentAt: number; refusals: number; sending?: boolean; replaced?: boolean; spoolTimer?: NodeJS.Timeout; spooled?: boolean };

/** A result unacked this long is written to the spool: an ack normally comes within milliseconds. */
export const SPOOL_AFTER_MS = 1000;
const SPOOL_NAME = /^[A-Za-z0-9-]{1,200}\.json$/;

/** A result the database refused (`result_refused: not_stored`) is sent this many times, then dropped. */
export const MAX_STORE_REFUSALS = 5;

export interface ResultOutboxOptions {
  /** PAPRIKA_MAX_RESULT_BYTES: a bigger result is reported `failed: result too large`. */
  maxResultBytes: number;
  log: Logger;
  /** Write a frame on the current link; false when there is no open link (`sent` is then never called). */
  transmit: (frame: string, sent: () => void) => boolean;
  now?: () => number;
  /**
   * Where results unacked for SPOOL_AFTER_MS are kept on disk, so a crash of this process does
   * not lose them: the next process lists them in its hello and sends them (a worker SIGKILLed
   * while Postgres was down lost jobs that had succeeded; they were stored `failed`).
   */
  spoolDir?: string;
}

export class ResultOutbox {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(private readonly o: ResultOutboxOptions) {
    this.now = o.now ?? Date.now;
    this.loadSpool();
  }

  /** Results an earlier process of this worker kept and no hub acked: sent once linked. */
  private loadSpool(): void {
    const dir = this.o.spoolDir;
    if (!dir) return;
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.o.log.warn({ dir, err: String(err) }, 'kept results unreadable; starting without them');
      return;
    }
    for (const name of names) {
      if (!SPOOL_NAME.test(name)) continue;
      try {
        const result = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as JobResult;
        if (result?.type !== 'job_result' || `${result.job_id}.json` !== name) throw new Error('not a job result of this name');
        const { v: _v, ...body } = result as JobResult & { v?: number };
        this.entries.set(result.job_id, { result: body as JobResult, sentAt: this.now(), refusals: 0, spooled: true });
        this.o.log.info({ job_id: result.job_id, assignment_id: result.assignment_id, status: result.status }, 'result kept from an earlier run; sent once linked');
      } catch (err) {
        this.o.log.warn({ file: path.join(dir, name), err: String(err) }, 'unreadable kept result; left where it is');
      }
    }
  }

  private spool(entry: Entry): void {
    const dir = this.o.spoolDir;
    if (!dir || this.entries.get(entry.result.job_id) !== entry || !SPOOL_NAME.test(`${entry.result.job_id}.json`)) return;
    const file = path.join(dir, `${entry.result.job_id}.json`);
    try {
      makeDirs(dir, 0o700);
      writeFileWhole(file, encode(entry.result), 0o600);
      entry.spooled = true;
    } catch (err) {
      this.o.log.warn({ job_id: entry.result.job_id, err: String(err) }, 'could not keep an unacked result on disk');
    }
  }

  /** Never throws: a data directory gone read-only must not keep an acked result in the outbox. */
  private unspool(entry: Entry | undefined): void {
    if (!entry) return;
    clearTimeout(entry.spoolTimer);
    if (!entry.spooled || !this.o.spoolDir) return;
    try {
      fs.rmSync(path.join(this.o.spoolDir, `${entry.result.job_id}.json`), { force: true });
    } catch (err) {
      this.o.log.warn({ job_id: entry.result.job_id, err: String(err) }, 'could not remove a kept result');
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** What a hello lists: the hub then knows these jobs ended here even before the results arrive. */
  pending(): Array<{ job_id: string; assignment_id: string }> {
    return [...this.entries.values()].map(({ result }) => ({ job_id: result.job_id, assignment_id: result.assignment_id }));
  }

  /** A job ended: keep its result (capped to what may be stored) and send it now if linked. */
  add(outcome: JobResult): void {
    const r = capResult(outcome, this.o.maxResultBytes);
    // What the hub is told, when it differs from 'job finished': the worker's own record of the run.
    if (r.status !== outcome.status) this.o.log.warn({ job_id: r.job_id, assignment_id: r.assignment_id, status: r.status, error: r.error }, 'job result replaced');
    this.put({ result: r, sentAt: this.now(), refusals: 0 });
  }

  /** A hub stored it. Logged: the worker's own record that a hub took the result (the chaos run's evidence). */
  acked(jobId: string): void {
    const entry = this.entries.get(jobId);
    const acked = entry?.result;
    if (acked) this.o.log.info({ job_id: acked.job_id, assignment_id: acked.assignment_id, status: acked.status }, 'result acked');
    this.entries.delete(jobId);
    this.unspool(entry);
  }

  /**
   * Too large for the link, or not valid as sent: the job is reported failed instead, naming why
   * (the same result could never be taken). Refused by the database: sent again on the heartbeat
   * tick, at most MAX_STORE_REFUSALS times, then dropped (the hub's reconciler ends the job).
   */
  refused(msg: Pick<Refusal, 'job_id' | 'code' | 'reason'>): void {
    const entry = this.entries.get(msg.job_id);
    if (!entry) return;
    const { job_id, assignment_id } = entry.result;
    if (msg.code === 'too_large' || msg.code === 'invalid') {
      // Already replaced by a failure report: a refusal now is either a late one of the original
      // (sent twice, e.g. again after a re-link) or of the report itself. Neither is replaced
      // again; the report is dropped once refused as often as a not_stored result would be.
      if (entry.replaced) {
        entry.refusals++;
        if (entry.refusals >= MAX_STORE_REFUSALS) this.drop(entry, msg.reason);
        return;
      }
      const error = boundedError(msg.code === 'too_large' ? `result too large: ${msg.reason}` : `result refused by the hub: ${msg.reason}`);
      const failed: JobResult = { type: 'job_result', job_id, assignment_id, status: 'failed', error };
      this.o.log.warn({ job_id, assignment_id, status: failed.status, error: failed.error }, 'job result replaced');
      this.put({ result: failed, sentAt: this.now(), refusals: 0, replaced: true });
      return;
    }
    entry.refusals++;
    if (entry.refusals < MAX_STORE_REFUSALS) return this.o.log.warn({ job_id, refusals: entry.refusals, reason: msg.reason }, 'the hub could not store a result; sending it again later');
    this.drop(entry, msg.reason);
  }

  /** The hub says the job is not this worker's (reassigned, or unknown to its database): dropped. */
  disowned(jobId: string, reason: string): void {
    const entry = this.entries.get(jobId);
    if (entry) this.drop(entry, reason);
  }

  private drop(entry: Entry, reason: string): void {
    const { job_id, assignment_id } = entry.result;
    this.entries.delete(job_id);
    this.unspool(entry);
    this.o.log.error({ job_id, assignment_id, refusals: entry.refusals, reason }, 'result dropped: the hub refused to store it');
  }

  /** The hub closed the link on a frame past its ceiling (1009): a result that big is never sent again. */
  closedOnOversize(): void {
    for (const entry of [...this.entries.values()]) {
      if (frameSize(entry.result) > MAX_FRAME_BYTES) this.refused({ job_id: entry.result.job_id, code: 'too_large', reason: `the hub closed the link on a frame over ${MAX_FRAME_BYTES} bytes` });
    }
  }

  /** Send again every result unacked for at least `olderThanMs` (0 after a welcome: all of them). */
  resend(olderThanMs: number): void {
    const now = this.now();
    for (const entry of this.entries.values()) {
      if (entry.sending || now - entry.sentAt < olderThanMs) continue;
      entry.sentAt = now;
      this.transmit(entry);
    }
  }

  private put(entry: Entry): void {
    const before = this.entries.get(entry.result.job_id);
    if (before) clearTimeout(before.spoolTimer);
    this.entries.set(entry.result.job_id, entry);
    if (this.o.spoolDir) {
      // A replaced result that was on disk is rewritten at once (the file must not hold the old one).
      if (before?.spooled) {
        this.spool(entry);
        // Not rewritten: the old file is still there, and the ack must still remove it.
        entry.spooled = true;
      } else entry.spoolTimer = setTimeout(() => this.spool(entry), SPOOL_AFTER_MS).unref();
    }
    this.transmit(entry);
  }

  private transmit(entry: Entry): void {
    entry.sending = this.o.transmit(encode(entry.result), () => {
      entry.sending = false;
      entry.sentAt = this.now();
    });
  }
}
