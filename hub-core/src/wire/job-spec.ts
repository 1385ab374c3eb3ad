// Job kinds and their specs (SPEC.md § Jobs). One schema per kind, used both to validate
// POST /jobs and as the TypeScript type the worker runners receive.
import { z } from 'zod';

const httpUrl = z
  .string()
  .max(4096)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'expected an http(s) URL');

const timeoutS = z.number().positive().max(86_400).optional();
const selector = z.string().min(1).max(2000);
const valueName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only')
  // As a key of the result's `values` it would set the object's prototype, and the value would be lost.
  .refine((n) => n !== '__proto__', 'the name __proto__ is reserved');

export const FetchSpec = z.strictObject({
  url: httpUrl,
  wait_until: z.enum(['load', 'domcontentloaded', 'networkidle0', 'networkidle2']).optional(),
  screenshot: z.boolean().optional(),
  timeout_s: timeoutS,
});

export const MacroStep = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('goto'), url: httpUrl, wait_until: z.enum(['load', 'domcontentloaded', 'networkidle0', 'networkidle2']).optional() }),
  z.strictObject({ op: z.literal('click'), selector }),
  z.strictObject({ op: z.literal('type'), selector, text: z.string().max(100_000) }),
  z.strictObject({ op: z.literal('wait_for'), selector, timeout_ms: z.number().int().positive().max(600_000).optional() }),
  z.strictObject({ op: z.literal('extract'), selector, name: valueName, attr: z.string().min(1).max(200).optional(), property: z.enum(['textContent', 'innerText', 'innerHTML', 'value']).optional() }),
  z.strictObject({ op: z.literal('screenshot'), name: valueName.optional(), full_page: z.boolean().optional() }),
  z.strictObject({ op: z.literal('eval'), expression: z.string().min(1).max(100_000), name: valueName.optional() }),
]);

/** Most steps a macro may have (each screenshot step is one asset of its result). */
export const MAX_MACRO_STEPS = 500;

export const MacroSpec = z.strictObject({
  steps: z.array(MacroStep).min(1).max(MAX_MACRO_STEPS),
  timeout_s: timeoutS,
});

export const RerunSpec = z.strictObject({
  job_id: z.string().uuid(),
  timeout_s: timeoutS,
});

export const SleepSpec = z.strictObject({
  ms: z.number().int().min(0).max(3_600_000),
  timeout_s: timeoutS,
});

export const JOB_KINDS = ['fetch', 'macro', 'rerun', 'sleep'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const JobRequest = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('fetch'), spec: FetchSpec }),
  z.strictObject({ kind: z.literal('macro'), spec: MacroSpec }),
  z.strictObject({ kind: z.literal('rerun'), spec: RerunSpec }),
  z.strictObject({ kind: z.literal('sleep'), spec: SleepSpec }),
]);
export type JobRequest = z.infer<typeof JobRequest>;
export type FetchSpec = z.infer<typeof FetchSpec>;
export type MacroSpec = z.infer<typeof MacroSpec>;
export type MacroStep = z.infer<typeof MacroStep>;
export type SleepSpec = z.infer<typeof SleepSpec>;
export type RerunSpec = z.infer<typeof RerunSpec>;

/** What a worker runs: rerun is resolved by the hub into the earlier job's kind and spec. */
export type RunnableJob =
  | { kind: 'fetch'; spec: FetchSpec }
  | { kind: 'macro'; spec: MacroSpec }
  | { kind: 'sleep'; spec: SleepSpec };

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'canceled']);

/** Session commands: the macro ops plus ping. */
export const SessionCommand = z.union([MacroStep, z.strictObject({ op: z.literal('ping') })]);
export type SessionCommand = z.infer<typeof SessionCommand>;
