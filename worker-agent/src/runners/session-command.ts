// A session command: one macro op on the session's page (kept open between commands), or ping.
import type { SessionCommand } from 'paprika/wire';
import { runStep } from './macro-steps.ts';
import type { PageWork } from './page-job.ts';

/** Sessions have no step list: the command is "step 1" only for naming an unnamed screenshot. */
export async function runSessionCommand(work: PageWork, command: Exclude<SessionCommand, { op: 'ping' }>): Promise<unknown> {
  const out = await runStep(work, command, 1);
  if (out.navigation) return out.navigation;
  if (out.asset) return { asset: out.asset };
  if (command.op === 'extract' || command.op === 'eval') return out.name === undefined ? { value: out.value } : { name: out.name, value: out.value };
  return { ok: true };
}
