// One macro op on a page. Shared by `macro` jobs and session commands so both behave alike.
import type { Asset, MacroStep } from 'paprika/wire';
import { UrlDenied } from '../chrome/lane-errors.ts';
import { gotoPage, msUntil, pngAsset, type PageWork } from './page-job.ts';

export interface StepOutput {
  /** Present for ops that produce a value (extract, eval): stored under `name`. */
  name?: string;
  value?: unknown;
  /** The value's JSON in UTF-8 bytes (what it adds to the result as sent). */
  bytes?: number;
  asset?: Asset;
  /** goto only: what the navigation answered. */
  navigation?: { status_code: number | null; final_url: string };
}

/** `stepNumber` is 1-based; it names unnamed screenshots (`screenshot-3.png`). */
export async function runStep(work: PageWork, step: MacroStep, stepNumber: number): Promise<StepOutput> {
  const { page, deadline } = work;
  const timeout = msUntil(deadline);
  switch (step.op) {
    case 'goto': {
      const response = await gotoPage(work, step.url, { waitUntil: step.wait_until ?? 'load', timeout });
      return { navigation: { status_code: response ? response.status() : null, final_url: page.url() } };
    }
    case 'click':
      // A locator waits until the element is attached, visible and stable, like a person would.
      await page.locator(step.selector).setTimeout(timeout).click();
      return {};
    case 'type': {
      const input = await page.waitForSelector(step.selector, { timeout });
      if (!input) throw new Error(`no element matches ${step.selector}`);
      await input.type(step.text);
      await input.dispose();
      return {};
    }
    case 'wait_for':
      await page.waitForSelector(step.selector, { timeout: Math.min(step.timeout_ms ?? timeout, timeout) });
      return {};
    case 'extract':
      return { name: step.name, ...jsonValue(await extractValue(page, step)) };
    case 'screenshot': {
      const bytes = step.full_page ? await fullPageShot(page) : await page.screenshot({ type: 'png' });
      return { asset: pngAsset(`${step.name ?? `screenshot-${stepNumber}`}.png`, bytes) };
    }
    case 'eval':
      return { name: step.name, ...jsonValue(await pageJson(page, step.expression)) };
  }
}

/**
 * Most pixels a full-page screenshot may have. Chrome encodes the PNG on its browser process,
 * which answers nothing else meanwhile: about 0.4 s a megapixel of noise on a 2-core worker
 * (2000 x 30000 px: 28 s, a 181 MB PNG), long enough for the lane's watchdog to call the browser
 * hung and kill it, with every lane's job in shared mode. At this bound the pause is ~7 s.
 */
export const MAX_FULL_PAGE_PIXELS = 16_000_000;

/**
 * The whole page, measured first and captured with that clip: a page that grows after it was
 * measured is cut at the size measured, never past the bound.
 */
async function fullPageShot(page: PageWork['page']): Promise<Uint8Array> {
  // Chrome's own layout figures (what Puppeteer's fullPage uses), not the page's script, which
  // could report any size through overridden getters.
  const cdp = await page.createCDPSession();
  let size: { width: number; height: number };
  try {
    size = (await cdp.send('Page.getLayoutMetrics')).cssContentSize;
  } finally {
    await cdp.detach().catch(() => {});
  }
  const width = Math.ceil(size.width);
  const height = Math.ceil(size.height);
  if (!(width > 0 && height > 0)) throw new Error(`full_page screenshot: the page has no size to capture (${width} x ${height})`);
  if (width * height > MAX_FULL_PAGE_PIXELS) {
    throw new Error(`full_page screenshot of ${width} x ${height} px (${((width * height) / 1e6).toFixed(1)} MP) is over the limit of ${MAX_FULL_PAGE_PIXELS / 1e6} MP: take a viewport screenshot, or of a shorter page`);
  }
  return page.screenshot({ type: 'png', clip: { x: 0, y: 0, width, height }, captureBeyondViewport: true });
}

type ExtractStep = Extract<MacroStep, { op: 'extract' }>;

async function extractValue(page: PageWork['page'], step: ExtractStep): Promise<unknown> {
  const found = await page.evaluate(
    (selector: string, attr: string | null, property: string) => {
      const el = document.querySelector(selector);
      if (!el) return { found: false, value: null };
      if (attr) return { found: true, value: el.getAttribute(attr) };
      return { found: true, value: (el as unknown as Record<string, unknown>)[property] ?? null };
    },
    step.selector,
    step.attr ?? null,
    step.property ?? 'textContent',
  );
  if (!found.found) throw new Error(`no element matches ${step.selector}`);
  return found.value;
}

/** Results travel as JSON: undefined becomes null, functions and cycles are refused clearly. */
/**
 * The expression's value as JSON.stringify makes it in the page. Taken by value instead, a value
 * CDP cannot copy (a cycle, arrays nested thousands deep) came back as undefined, and the job
 * succeeded with `null` (outside probe); now it fails naming why.
 */
async function pageJson(page: PageWork['page'], expression: string): Promise<unknown> {
  const handle = await page.evaluateHandle(expression);
  try {
    const [ok, text] = await handle.evaluate((v: unknown): [boolean, string | null] => {
      try {
        return [true, JSON.stringify(v) ?? null];
      } catch (err) {
        return [false, String(err)];
      }
    });
    if (!ok) throw new Error(`the expression's value is not JSON-serialisable: ${text}`);
    return text === null ? undefined : (JSON.parse(text) as unknown);
  } finally {
    await handle.dispose().catch(() => {});
  }
}

function jsonValue(value: unknown): { value: unknown; bytes: number } {
  if (value === undefined) return { value: null, bytes: 4 };
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    throw new Error(`the expression's value is not JSON-serialisable: ${(err as Error).message}`);
  }
  return { value: JSON.parse(json) as unknown, bytes: Buffer.byteLength(json, 'utf8') };
}

/** A macro step that failed: its number travels as the job's `failed_step`. */
export class StepFailed extends Error {
  constructor(
    readonly step: number,
    message: string,
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

/** The failure text the job reports: which step, which op, why (a denied URL reads the same everywhere). */
export function stepFailure(stepNumber: number, step: { op: string }, err: unknown): StepFailed {
  if (err instanceof UrlDenied) return new StepFailed(stepNumber, err.message, err);
  const reason = err instanceof Error ? err.message : String(err);
  return new StepFailed(stepNumber, `step ${stepNumber} (${step.op}): ${reason}`, err);
}
