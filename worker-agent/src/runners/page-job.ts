// What every runner receives and returns. Runners only drive a page; the lane owns the browser,
// the abort/crash race and the page's lifetime.
import type { GoToOptions, HTTPResponse, Page } from 'puppeteer-core';
import type { Asset } from 'paprika/wire';

export interface PageWork {
  readonly page: Page;
  /** Epoch ms: puppeteer waits are capped by what is left of the job's deadline. */
  readonly deadline: number;
  /** Navigate the page; the lane's version checks the egress policy first (default page.goto). */
  readonly goto?: (url: string, options: GoToOptions) => Promise<HTTPResponse | null>;
  /** Told the (1-based) number of each macro step as it starts: a failure names it. */
  readonly onStep?: (step: number) => void;
  /** PAPRIKA_MAX_RESULT_BYTES: a macro stops at the step whose values and screenshots pass it. */
  readonly maxResultBytes?: number;
}

export function gotoPage(work: PageWork, url: string, options: GoToOptions): Promise<HTTPResponse | null> {
  return work.goto ? work.goto(url, options) : work.page.goto(url, options);
}

export interface RunnerOutput {
  result: unknown;
  assets: Asset[];
}

/** Time left before the deadline, never 0: puppeteer reads a timeout of 0 as "wait forever". */
export function msUntil(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

export function pngAsset(name: string, bytes: Uint8Array): Asset {
  return { name, content_type: 'image/png', data_base64: Buffer.from(bytes).toString('base64') };
}
