// A result the hub could not store yet (its database down) survives the worker process: kept on
// disk after SPOOL_AFTER_MS unacked, listed in the next process's hello and stored then. Before,
// a worker SIGKILLed during a Postgres outage lost jobs that had succeeded: stored `failed:
// worker … restarted while holding this job`. The store here is PGlite behind a switch that
// makes every result write fail like a database that is down.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJobStore, type SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import type { JobStore } from '../../hub-core/src/ports/job-store.ts';
import { WorkerAgent } from '../../worker-agent/src/agent.ts';
import { CredentialFile } from '../../worker-agent/src/credential-file.ts';
import { simulatedPool } from '../../worker-agent/src/lanes/simulated-lane.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { post } from '../harness/http.ts';
import { waitFor } from '../harness/processes.ts';

describe('results kept on disk until a hub stores them', () => {
  let h: TestHub;
  let inner: SqlJobStore;
  let down = false;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-spool-'));
  const log = pino({ level: process.env.PAPRIKA_TEST_LOG_LEVEL ?? 'silent' });

  beforeAll(async () => {
    inner = await openJobStore({});
    const store = new Proxy(inner, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if ((prop === 'finishJob' || prop === 'finishJobs') && typeof v === 'function') {
          return (...args: unknown[]) => (down ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) : v.apply(target, args));
        }
        return v;
      },
    }) as JobStore;
    h = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '2' }, { store });
  });
  afterAll(async () => {
    await h?.stop();
    await inner?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const agent = (lanIp: string) => new WorkerAgent({ hubUrl: h.url, pool: simulatedPool(1, `sim://${lanIp}`), lanIp, hostname: 'spool', dataDir, heartbeatS: 0.2, diskMaxPct: 100, log, backoff: { baseMs: 50, capMs: 200 } });

  it('a success the hub could not store when its worker stopped is stored by the next process', async () => {
    const lanIp = '127.0.9.1';
    const first = agent(lanIp);
    await first.start();
    await first.linked;
    down = true;
    const job = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    const spooled = path.join(`${new CredentialFile(dataDir, h.url, lanIp).path}.results`, `${job.id}.json`);
    await waitFor('the unacked result kept on disk', async () => fs.existsSync(spooled), 15_000, 20);
    await first.stop(0); // the process ends with its result unacked (as a SIGKILL would, once it is on disk)
    down = false;
    // And one kept for a job the hub does not know (a new database): refused as not this worker's, then dropped for good.
    const stranger = path.join(path.dirname(spooled), '00000000-0000-4000-8000-00000000beef.json');
    fs.writeFileSync(stranger, JSON.stringify({ type: 'job_result', v: 1, job_id: '00000000-0000-4000-8000-00000000beef', assignment_id: '00000000-0000-4000-8000-000000000001', status: 'succeeded', result: { ok: true } }));
    const second = agent(lanIp);
    await second.start();
    try {
      await second.linked;
      const stored = await waitFor('the job ends', async () => {
        const j = (await (await fetch(`${h.url}/jobs/${job.id}`)).json()) as { status: string; result: unknown; error: string | null };
        return j.status === 'running' ? undefined : j;
      }, 15_000, 20);
      expect(stored).toMatchObject({ status: 'succeeded', error: null });
      await waitFor('the kept result removed once acked', async () => !fs.existsSync(spooled), 5000, 20);
      await waitFor("the stranger's result dropped", async () => !fs.existsSync(stranger), 5000, 20);
    } finally {
      await second.stop(0);
    }
  });
});
