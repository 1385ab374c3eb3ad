// `npm run chaos`: flags → one chaos run, its summary table, and an exit code (0 only when
// nothing was doubled, lost, stuck or late). The report also goes to test-artifacts/.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FAULT_KINDS } from './faults.ts';
import { chaosPassed, formatChaosReport, runChaos } from './run.ts';

const USAGE = 'usage: npm run chaos -- [--seed N] [--duration S] [--hubs N] [--agents N] [--lanes N] [--clients N] [--every-fault]';

function whole(flag: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`paprika chaos: --${flag} expects a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

export async function main(argv: string[]): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, options: { seed: { type: 'string' }, duration: { type: 'string' }, hubs: { type: 'string' }, agents: { type: 'string' }, lanes: { type: 'string' }, clients: { type: 'string' }, 'every-fault': { type: 'boolean' } } }));
  } catch (err) {
    console.error(`paprika chaos: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const options = {
    seed: whole('seed', values.seed, Math.floor(Math.random() * 1_000_000), 0, 2 ** 31 - 1),
    durationS: whole('duration', values.duration, 120, 5, 1800),
    hubs: whole('hubs', values.hubs, 3, 1, 8),
    agents: whole('agents', values.agents, 24, 1, 100),
    lanes: whole('lanes', values.lanes, 2, 1, 16),
    clients: whole('clients', values.clients, 12, 1, 64),
  };
  const say = (line: string) => console.log(`chaos: ${line}`);
  // --every-fault: each kind once first (as the suite's short run does), then seeded draws.
  const report = await runChaos({ ...options, say, plan: values['every-fault'] ? [...FAULT_KINDS] : undefined });
  console.log(`\n${formatChaosReport(report)}`);
  const file = path.resolve('test-artifacts', 'chaos-report.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(report, null, 2));
  const ok = chaosPassed(report);
  console.log(`\nchaos: ${ok ? 'PASSED' : 'FAILED'} (report: ${path.relative(process.cwd(), file)}; same run again: --seed ${options.seed})`);
  process.exit(ok ? 0 : 1);
}
