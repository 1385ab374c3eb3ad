// `paprika demo`: one command on a fresh machine. A hub on PAPRIKA_PORT with the embedded
// defaults (PGlite + in-process registry), two local workers with two Chrome lanes each,
// a few example jobs, and the console URL. Ctrl-C stops everything.
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../hub-core/src/config.ts';
import { startHub } from '../hub-core/src/app/hub.ts';
import { startDemoPage } from './demo-page.ts';
import { WorkerAgent } from '../worker-agent/src/agent.ts';
import { CredentialFile } from '../worker-agent/src/credential-file.ts';
import { workerIdCandidates } from '../hub-core/src/domain/worker-id.ts';
import type { Hub } from '../hub-core/src/app/hub.ts';
import { loadAgentConfig } from '../worker-agent/src/agent-config.ts';
import { buildPool } from '../worker-agent/src/main.ts';

export async function runDemo(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, strict: true, options: { simulate: { type: 'boolean' } } });
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const config = loadConfig(env);
  const agentConfig = loadAgentConfig(env);
  const simulate = Boolean(values.simulate);
  const log = pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel });

  if (!simulate) {
    const { findChrome, CHROME_HELP } = await import('../worker-agent/src/chrome/find-chrome.ts').catch(() => ({ findChrome: () => undefined, CHROME_HELP: 'Chrome lanes are not built in.' }));
    if (!findChrome({ explicitPath: config.chromePath })) {
      console.error(`paprika demo: no Chrome or Chromium found.\n${CHROME_HELP}\nOr run the demo without a browser: npm run demo -- --simulate`);
      process.exit(1);
    }
  }

  const hub = await startHub({ config, logger: log });
  const agents: WorkerAgent[] = [];
  const extras: Array<() => Promise<void>> = [];
  for (const [i, lanIp] of ['127.0.0.101', '127.0.0.102'].entries()) {
    await forgetDemoWorkerOfAnotherPort(hub, config.dataDir, lanIp);
    const flags = { hub: hub.url, lanes: 2, singleChrome: false, lanIp, simulateLanes: simulate ? 2 : undefined };
    // The worker's own variables (PAPRIKA_SHARED_CHROME, PAPRIKA_LANE_RECYCLE_JOBS, PAPRIKA_MAX_RESULT_BYTES…) apply as to `paprika worker`.
    const { pool, stopExtras, viewKeys } = await buildPool(flags, config.chromePath, log, agentConfig);
    const agent = new WorkerAgent({ hubUrl: hub.url, pool, viewKeys, lanIp, hostname: `demo-worker-${i + 1}`, dataDir: config.dataDir, heartbeatS: config.heartbeatS, diskMaxPct: config.diskMaxPct, maxResultBytes: agentConfig.maxResultBytes, log });
    await agent.start();
    await agent.linked;
    agents.push(agent);
    extras.push(stopExtras);
  }

  console.log(`Paprika demo: hub ${config.hubId} with ${agents.length} workers × 2 ${simulate ? 'simulated' : 'Chrome'} lanes`);
  console.log(`  console:  ${hub.url}/`);
  console.log(`  API:      curl -s -XPOST ${hub.url}/jobs -H 'content-type: application/json' -d '{"kind":"sleep","spec":{"ms":500}}'`);
  console.log(`  data dir: ${config.dataDir}`);

  const page = simulate ? undefined : await startDemoPage();
  if (page) extras.push(page.stop);
  const examples = !page
    ? [{ kind: 'sleep', spec: { ms: 300 } }, { kind: 'sleep', spec: { ms: 600 } }, { kind: 'sleep', spec: { ms: 900 } }]
    : [
        { kind: 'fetch', spec: { url: page.url, screenshot: true } },
        { kind: 'macro', spec: { steps: [{ op: 'goto', url: page.url }, { op: 'type', selector: '#name', text: 'Paprika' }, { op: 'extract', selector: '#typed', name: 'typed' }, { op: 'screenshot' }] } },
        { kind: 'sleep', spec: { ms: 500 } },
      ];
  if (page) console.log(`  example page: ${page.url}`);
  for (const ex of examples) {
    const res = await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ex) });
    const body = (await res.json()) as { id?: string; status?: string; error?: string };
    console.log(res.ok ? `  example ${ex.kind} job ${body.id}: ${body.status}` : `  example ${ex.kind} job refused (${res.status}): ${body.error}`);
  }
  console.log('Press Ctrl-C to stop.');

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping demo…');
    await Promise.all(agents.map((a) => a.stop(2000).catch(() => {})));
    for (const e of extras) await e().catch(() => {});
    await hub.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

/**
 * A worker's credential file is per hub URL, port included, but the demo's hub keeps its
 * enrollments in the data directory whatever the port: a demo started again on another
 * PAPRIKA_PORT found its workers enrolled and their secrets nowhere ('already enrolled … reset').
 * The demo is the operator of its own hub, so it resets the enrollment of its own worker (same
 * address) when no credential for this URL exists, and the worker enrolls again.
 */
async function forgetDemoWorkerOfAnotherPort(hub: Hub, dataDir: string, lanIp: string): Promise<void> {
  if (new CredentialFile(dataDir, hub.url, lanIp).load()) return;
  for (const id of workerIdCandidates(lanIp)) {
    const enrolled = await hub.store.credentials.get(id);
    if (enrolled?.lan_ip === lanIp) await hub.enrollment.resetCredentials(id, 'demo');
  }
}
