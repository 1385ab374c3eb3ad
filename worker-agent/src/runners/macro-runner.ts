// `macro` {steps}: run the steps in order on one page; the first failing step fails the job.
import type { MacroSpec } from 'paprika/wire';
import { runStep, stepFailure } from './macro-steps.ts';
import type { PageWork, RunnerOutput } from './page-job.ts';

export interface MacroResult {
  values: Record<string, unknown>;
  steps: number;
}

export async function runMacro(work: PageWork, spec: MacroSpec): Promise<RunnerOutput> {
  const values: Record<string, unknown> = {};
  const assets: RunnerOutput['assets'] = [];
  for (const [i, step] of spec.steps.entries()) {
    let out;
    work.onStep?.(i + 1);
    try {
      out = await runStep(work, step, i + 1);
    } catch (err) {
      throw stepFailure(i + 1, step, err);
    }
    if (out.name !== undefined) values[out.name] = out.value;
    if (out.asset) assets.push(out.asset);
  }
  const result: MacroResult = { values, steps: spec.steps.length };
  return { result, assets };
}
