// `macro` {steps}: run the steps in order on one page; the first failing step fails the job.
import type { MacroSpec } from 'paprika/wire';
import { tooLarge } from '../result-cap.ts';
import { runStep, StepFailed, stepFailure } from './macro-steps.ts';
import type { PageWork, RunnerOutput } from './page-job.ts';

export interface MacroResult {
  values: Record<string, unknown>;
  steps: number;
}

export async function runMacro(work: PageWork, spec: MacroSpec): Promise<RunnerOutput> {
  const values: Record<string, unknown> = {};
  const assets: RunnerOutput['assets'] = [];
  // What the result holds so far (JSON of the values, screenshots' bytes), checked after every
  // step: a macro stops where it passes the cap instead of piling up hundreds of MB (a sum past
  // V8's longest string once crashed the agent when the result was serialised at the end).
  const parts = new Map<string, number>();
  let size = 0;
  const add = (name: string, bytes: number) => {
    size += bytes - (parts.get(name) ?? 0);
    parts.set(name, bytes);
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
      add(`the value ${out.name}`, out.chars ?? 0);
    }
    if (out.asset) {
      assets.push(out.asset);
      add(out.asset.name, Math.floor((out.asset.data_base64.length * 3) / 4));
    }
    if (work.maxResultBytes !== undefined && size > work.maxResultBytes) {
      const [name, bytes] = [...parts].reduce((a, b) => (b[1] > a[1] ? b : a));
      throw new StepFailed(i + 1, tooLarge(size, work.maxResultBytes, { name, bytes }), undefined);
    }
  }
  const result: MacroResult = { values, steps: spec.steps.length };
  return { result, assets };
}
