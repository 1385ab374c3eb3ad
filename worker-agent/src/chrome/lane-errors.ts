// Why a lane's work stopped before it finished. The lane turns these into job outcomes.
import { ProtocolError } from 'puppeteer-core';

/** The job's signal fired: the agent canceled the job or its deadline passed. */
export class WorkAborted extends Error {
  constructor(readonly reason: unknown) {
    super(reason === 'timeout' ? 'timeout' : typeof reason === 'string' ? reason : 'canceled');
  }
  get isTimeout(): boolean {
    return this.reason === 'timeout';
  }
}

/** The browser (or the page's renderer) died, hung or lost its connection mid-work. */
export class ChromeCrashed extends Error {
  constructor(reason: string) {
    super(`chrome crashed: ${reason}`);
  }
}

/** A navigation of the work's main frame that the egress policy refused. */
export class UrlDenied extends Error {
  constructor(
    readonly url: string,
    readonly rule: string,
  ) {
    super(`url denied: ${url} (${rule})`);
  }
}

/** The errors puppeteer raises when its target or connection goes away under it, however deeply wrapped. */
export function isConnectionLoss(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ProtocolError) return true; // TargetCloseError and ConnectionClosedError extend it
    if (/target closed|session closed|connection closed|detached/i.test(e.message)) return true;
  }
  return false;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
