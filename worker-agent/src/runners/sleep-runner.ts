// `sleep` {ms}: holds the lane without touching the browser (load tests, lane-holding probes).
import type { SleepSpec } from 'paprika/wire';
import type { RunnerOutput } from './page-job.ts';

/** Resolves after `ms`; an abort clears the timer (the lane's race reports the abort itself). */
export function runSleep(spec: SleepSpec, signal: AbortSignal, lane: number): Promise<RunnerOutput> {
  const started = Date.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ result: { slept_ms: Date.now() - started, lane }, assets: [] }), spec.ms);
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });
}
