// One macro op on a page. Shared by `macro` jobs and session commands so both behave alike.
import type { Asset, MacroStep } from 'paprika/wire';
import { UrlDenied } from '../chrome/lane-errors.ts';
import { gotoPage, msUntil, pngAsset, type PageWork } from './page-job.ts';

export interface StepOutput {
  /** Present for ops that produce a value (extract, eval): stored under `name`. */
  name?: string;
  value?: unknown;
  /** The value's length as JSON (what it adds to the result). */
  chars?: number;
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
      const bytes = await page.screenshot({ type: 'png', fullPage: step.full_page ?? false });
      return { asset: pngAsset(`${step.name ?? `screenshot-${stepNumber}`}.png`, bytes) };
    }
    case 'eval': {
      const value: unknown = await page.evaluate(step.expression);
      return { name: step.name, ...jsonValue(value) };
    }
  }
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
function jsonValue(value: unknown): { value: unknown; chars: number } {
  if (value === undefined) return { value: null, chars: 4 };
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    throw new Error(`the expression's value is not JSON-serialisable: ${(err as Error).message}`);
  }
  return { value: JSON.parse(json) as unknown, chars: json.length };
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
