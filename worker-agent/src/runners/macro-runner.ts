// `macro` {steps}: run the steps in order on one page; the first failing step fails the job.
import type { MacroSpec } from 'paprika/wire';
import { base64Bytes, tooLarge } from '../result-cap.ts';
import { runStep, StepFailed, stepFailure } from './macro-steps.ts';
import type { PageWork, RunnerOutput } from './page-job.ts';

export interface MacroResult {
  values: Record<string, unknown>;
  steps: number;
}

export async function runMacro(work: PageWork, spec: MacroSpec): Promise<RunnerOutput> {
  const values: Record<string, unknown> = {};
  const assets: RunnerOutput['assets'] = [];
  // What the result holds so far, as the link will carry it (values' JSON in UTF-8 bytes,
  // screenshots in base64), checked after every step: a macro stops where it passes the cap
  // instead of piling up hundreds of MB (a sum past V8's longest string once crashed the agent
  // when the result was serialised at the end). A value named again replaces the earlier one (as
  // in `values`); every screenshot counts, same name or not (each stays in `assets`).
  const parts = new Map<string, { name: string; bytes: number; counted: number }>();
  let size = 0;
  const add = (key: string, name: string, bytes: number, counted: number) => {
    size += counted - (parts.get(key)?.counted ?? 0);
    parts.set(key, { name, bytes, counted });
  };
  for (const [i, step] of spec.steps.entries()) {
    let out;
    work.onStep?.(i + 1);
    try {
      out = await runStep(work, step, i + 1);
    } catch (err) {
      throw stepFailure(i + 1, step, err);
    }
    if (out.name !== undefined) {
      values[out.name] = out.value;
      add(`value ${out.name}`, `the value ${out.name}`, out.bytes ?? 0, out.bytes ?? 0);
    }
    if (out.asset) {
      assets.push(out.asset);
      add(`step ${i + 1}`, out.asset.name, base64Bytes(out.asset.data_base64), out.asset.data_base64.length);
    }
    if (work.maxResultBytes !== undefined && size > work.maxResultBytes) {
      const largest = [...parts.values()].reduce((a, b) => (b.bytes > a.bytes ? b : a));
      throw new StepFailed(i + 1, tooLarge(size, work.maxResultBytes, largest), undefined);
    }
  }
  const result: MacroResult = { values, steps: spec.steps.length };
  return { result, assets };
}
