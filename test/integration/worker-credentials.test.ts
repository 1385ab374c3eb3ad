// The shared worker token only enrolls (the finding: whoever held it was every worker). With
// the token alone a client cannot link as an enrolled worker, adopt or finish its job, take
// its id by registering its address, enroll without bound, or keep an enrollment forever;
// the job JSON no longer shows the assignment id a forged report would need.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../hub-core/src/ports/clock.ts';
import { ENROLLMENT_TTL_S } from '../../hub-core/src/hub/worker-enrollment.ts';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { nextLanIp, spawnWorker, startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { enrollRaw, openRawLink, provenHello, rawLink } from '../harness/raw-link.ts';
import { requireServices } from '../harness/services.ts';

const WORKER_TOKEN = 'worker-token';
const ADMIN_TOKEN = 'admin-token';
const TOKENS = { PAPRIKA_WORKER_TOKEN: WORKER_TOKEN, PAPRIKA_ADMIN_TOKEN: ADMIN_TOKEN, PAPRIKA_BIND: '127.0.0.1' };
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

function register(hubUrl: string, body: Record<string, unknown>, token = WORKER_TOKEN): Promise<Response> {
  return fetch(`${hubUrl}/workers/register`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ hostname: 'h', ...body }) });
}

/** Resolves with the close code and reason once the hub closes the socket. */
function closeOf(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

describe.skipIf(!requireServices(['postgres', 'redis']))('worker credentials (Postgres + Redis)', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let hub: TestHub;
  let worker: SimAgent;
  let job: any;
  let assignmentId: string;
  const rowOf = async () => hub.hub.store.getJob(job.id);

  beforeAll(async () => {
    backends = await realBackends();
    hub = await startTestHub({ ...backends.env, ...TOKENS });
    worker = await startSimAgent(hub.url, 1, { token: WORKER_TOKEN, heartbeatS: 0.3 });
    job = await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 120_000 } }) }).then(json);
    expect(job).toMatchObject({ status: 'running', worker_id: worker.workerId });
    // What the attacker of the finding knew (then from GET /jobs/:id): the run's assignment id.
    assignmentId = (await rowOf())!.session_id!;
  });
  afterAll(async () => {
    await worker?.stop();
    await hub?.stop();
    await backends?.drop();
  });

  /** The real worker's link, job and status are exactly as before. */
  async function expectWorkerUntouched(linkBefore: unknown) {
    const link = hub.hub.localLinks.get(worker.workerId);
    expect(link).toBe(linkBefore);
    expect(link!.open).toBe(true);
    expect(link!.holding(job.id)?.assignmentId).toBe(assignmentId);
    expect(await rowOf()).toMatchObject({ status: 'running', worker_id: worker.workerId, session_id: assignmentId, attempts: 1, result: null, error: null });
    expect(worker.agent.runner.inFlight).toBe(1);
  }

  it('(a) refuses a hello for an enrolled id without its proof, or with a wrong one; the real link and job are untouched', async () => {
    const before = hub.hub.localLinks.get(worker.workerId);
    // No proof, and a fresh hello that would have failed the job as "restarted".
    const noProof = await openRawLink(hub.url, worker.workerId, { token: WORKER_TOKEN });
    const closedA = closeOf(noProof.ws);
    noProof.ws.send(encode({ type: 'hello', worker_id: worker.workerId, capabilities: { max_concurrent: 1024, lane_novnc_urls: ['x'], novnc_url: null, version: 't', platform: 't' }, fresh: true, jobs: [] }));
    expect(await closedA).toEqual({ code: 4401, reason: 'worker_proof_invalid' });
    expect(noProof.frames.find((f) => f.type === 'error')).toMatchObject({ details: { code: 'worker_proof_invalid' } });

    // A proof made with a secret of the attacker's choosing.
    const wrong = await openRawLink(hub.url, worker.workerId, { token: WORKER_TOKEN });
    const closedB = closeOf(wrong.ws);
    wrong.ws.send(provenHello(worker.workerId, 'f'.repeat(64), wrong.nonce, { fresh: true, jobs: [] }));
    expect((await closedB).code).toBe(4401);
    await expectWorkerUntouched(before);
  });

  it('(b) refuses adoption of its job: a forged hello fresh:false with the assignment id, and the same from a rogue id of its own', async () => {
    const before = hub.hub.localLinks.get(worker.workerId);
    const forged = await openRawLink(hub.url, worker.workerId, { token: WORKER_TOKEN });
    const closed = closeOf(forged.ws);
    forged.ws.send(provenHello(worker.workerId, '0'.repeat(64), forged.nonce, { fresh: false, jobs: [{ job_id: job.id, lane: 0, assignment_id: assignmentId }] }));
    expect((await closed).code).toBe(4401);

    // Enrolled under its own id, the rogue may link, but the job it claims to hold is not its own.
    const rogue = await rawLink(hub.url, 'w-rogue', { fresh: false, jobs: [{ job_id: job.id, lane: 0, assignment_id: assignmentId }] }, { token: WORKER_TOKEN });
    expect(rogue.frames.find((f) => f.type === 'cancel' && f.job_id === job.id)).toBeTruthy();
    expect(hub.hub.localLinks.get('w-rogue')!.in_flight).toBe(0);
    rogue.ws.close();
    await expectWorkerUntouched(before);
  });

  it('(c) refuses a forged job_result, job_started and job_rejected for its job from an enrolled rogue', async () => {
    const before = hub.hub.localLinks.get(worker.workerId);
    const rogue = await rawLink(hub.url, 'w-rogue2', {}, { token: WORKER_TOKEN });
    rogue.ws.send(encode({ type: 'job_started', job_id: job.id, assignment_id: assignmentId, lane: 0 }));
    rogue.ws.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assignmentId, status: 'succeeded', result: { forged: true } }));
    rogue.ws.send(encode({ type: 'job_rejected', job_id: job.id, assignment_id: assignmentId, reason: 'busy' }));
    const refusals = await waitFor('three refusals', async () => {
      const errs = rogue.frames.filter((f) => f.type === 'error' && /not yours/.test(f.message));
      return errs.length >= 3 ? errs : undefined;
    }, 5000, 10);
    expect(refusals.map((f) => f.details.refused)).toEqual(['job_started', 'job_result', 'job_rejected']);
    rogue.ws.close();
    await expectWorkerUntouched(before);
  });

  it("(d) refuses to register the live worker's address or id again (409), without or with a wrong secret", async () => {
    const lanIp = hub.hub.localLinks.get(worker.workerId)!.meta.lanIp;
    for (const body of [{ lan_ip: lanIp }, { lan_ip: lanIp, secret: 'a'.repeat(64) }, { lan_ip: lanIp, worker_id: worker.workerId }]) {
      const res = await register(hub.url, body);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ code: 'worker_enrolled', details: { worker_id: worker.workerId } });
    }
    // Its id from another address is not handed over either.
    const other = await register(hub.url, { lan_ip: '10.77.0.1', worker_id: worker.workerId });
    expect(other.status).toBe(409);
    expect(hub.hub.localLinks.get(worker.workerId)!.open).toBe(true);
  });

  it('refuses a hostname Postgres cannot store or with control characters (400): a NUL answered 500', async () => {
    for (const hostname of ['a\u0000b', 'a\nb', 'a\ud800b']) {
      const res = await register(hub.url, { lan_ip: '10.78.0.9', hostname });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'bad_request' });
    }
    const ok = await register(hub.url, { lan_ip: '10.78.0.9', hostname: 'fine' });
    expect(ok.status).toBe(201);
  });

  it('(g) an admin reset lets the id enroll again, and is audited with its actor', async () => {
    const lanIp = '10.61.0.7';
    const first = await register(hub.url, { lan_ip: lanIp });
    expect(first.status).toBe(201);
    const { worker_id: id, secret } = await first.json();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect((await register(hub.url, { lan_ip: lanIp })).status).toBe(409);
    // The old secret proves the id: kept, not rotated.
    const proven = await register(hub.url, { lan_ip: lanIp, secret });
    expect(proven.status).toBe(200);
    expect(await proven.json()).toMatchObject({ worker_id: id, secret });

    const url = `${hub.url}/admin/workers/${id}/reset-credentials`;
    expect((await fetch(url, { method: 'POST', headers: bearer(WORKER_TOKEN) })).status).toBe(401);
    const reset = await fetch(url, { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    expect(reset.status).toBe(200);
    expect(await reset.json()).toEqual({ worker_id: id, had_credential: true });
    const again = await register(hub.url, { lan_ip: lanIp });
    expect(again.status).toBe(201);
    const renewed = await again.json();
    expect(renewed.worker_id).toBe(id);
    expect(renewed.secret).not.toBe(secret);
    const audit = await fetch(`${hub.url}/admin/audit`, { headers: bearer(ADMIN_TOKEN) }).then(json);
    expect(audit.entries.find((e: any) => e.action === 'worker.reset_credentials' && e.target === id)).toMatchObject({ actor: expect.stringMatching(/^admin@/), details: { lan_ip: lanIp } });
  });

  it('(h) shows no assignment id in GET /jobs/:id or GET /jobs', async () => {
    const one = await fetch(`${hub.url}/jobs/${job.id}`).then((r) => r.text());
    const list = await fetch(`${hub.url}/jobs?limit=100`).then((r) => r.text());
    expect(JSON.parse(one)).toMatchObject({ id: job.id, status: 'running', session_id: null });
    expect(one).not.toContain(assignmentId);
    expect(list).not.toContain(assignmentId);
  });

  it('keeps an agent\'s credential across restarts: it links again under its id without enrolling', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cred-'));
    try {
      const lanIp = nextLanIp();
      const first = await startSimAgent(hub.url, 1, { token: WORKER_TOKEN, lanIp, dataDir });
      const files = fs.readdirSync(dataDir);
      expect(files).toHaveLength(1);
      expect(fs.statSync(path.join(dataDir, files[0])).mode & 0o777).toBe(0o600);
      const enrolledAt = (await hub.hub.store.credentials.get(first.workerId))!.created_at;
      await first.stop();
      const second = await startSimAgent(hub.url, 1, { token: WORKER_TOKEN, lanIp, dataDir });
      expect(second.workerId).toBe(first.workerId);
      expect((await hub.hub.store.credentials.get(second.workerId))!.created_at).toEqual(enrolledAt);
      await second.stop();
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('pointed at a new address of the same fleet, it names the credential it holds and the cp that carries it over; after that cp it links under its id', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cred-'));
    try {
      const lanIp = nextLanIp();
      const first = await startSimAgent(hub.url, 1, { token: WORKER_TOKEN, lanIp, dataDir });
      await first.stop();
      // The same hub under another name (as nginx in front of it would be): another origin.
      const moved = hub.url.replace('127.0.0.1', 'localhost');
      const refused = await startSimAgent(moved, 1, { token: WORKER_TOKEN, lanIp, dataDir }).then(
        () => undefined,
        (err: Error) => err.message,
      );
      const m = /this data dir holds its credential from (\S+) \(([^)]+)\)\. .* use that credential: cp (\S+) (\S+) and start the worker again/.exec(refused ?? '');
      expect(m, refused).not.toBeNull();
      expect(m![1]).toBe(new URL(hub.url).origin);
      expect(m![3]).toBe(m![2]);
      expect(fs.readdirSync(dataDir)).toHaveLength(1); // nothing written for the new address
      fs.copyFileSync(m![3]!, m![4]!);
      const again = await startSimAgent(moved, 1, { token: WORKER_TOKEN, lanIp, dataDir });
      expect(again.workerId).toBe(first.workerId);
      await again.stop();
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a data dir the agent cannot write stops it before it enrolls (naming --data-dir), so the next start with a good one enrolls', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cred-'));
    try {
      fs.writeFileSync(path.join(base, 'a-file'), '');
      const lanIp = '127.0.78.1';
      const bad = spawnWorker(['--hub', hub.url, '--simulate-lanes', '1', '--lan-ip', lanIp, '--token', WORKER_TOKEN, '--data-dir', path.join(base, 'a-file', 'sub')]);
      expect(await bad.exited).not.toBe(0);
      expect(bad.output()).toMatch(/cannot (read|write) the worker's credential in .*a-file.* \(--data-dir \/ PAPRIKA_DATA_DIR\): ENOTDIR/);
      expect(await hub.hub.store.credentials.get('w781')).toBeUndefined(); // nothing enrolled
      const good = await startSimAgent(hub.url, 1, { token: WORKER_TOKEN, lanIp, dataDir: path.join(base, 'good') });
      expect(good.workerId).toBe('w781');
      await good.stop();
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  }, 30_000);

  it('a wrong worker token names --token and PAPRIKA_WORKER_TOKEN', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cred-'));
    try {
      const proc = spawnWorker(['--hub', hub.url, '--simulate-lanes', '1', '--lan-ip', '127.0.79.1', '--token', 'not-the-token', '--data-dir', dataDir]);
      expect(await proc.exited).toBe(1);
      expect(proc.output()).toMatch(/hub refused registration \(401\).*--token \/ PAPRIKA_WORKER_TOKEN/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);

  it('an agent process whose id is enrolled by another secret exits non-zero, telling the operator to reset it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cred-'));
    try {
      // Enrolled elsewhere (another data dir): this process has no credential for the id.
      const holder = await startSimAgent(hub.url, 1, { token: WORKER_TOKEN, lanIp: '127.0.77.1' });
      const proc = spawnWorker(['--hub', hub.url, '--simulate-lanes', '1', '--lan-ip', '127.0.77.1', '--token', WORKER_TOKEN, '--data-dir', dataDir]);
      expect(await proc.exited).toBe(1);
      expect(proc.output()).toMatch(/already enrolled[\s\S]*reset its credentials/);
      expect(hub.hub.localLinks.get(holder.workerId)!.open).toBe(true);
      await holder.stop();
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('registration limits', () => {
  let hub: TestHub;
  beforeAll(async () => {
    // The defaults (10/min per source, burst 20), not the test harness's raised burst.
    hub = await startTestHub({ ...TOKENS, PAPRIKA_REGISTER_BURST: '20' });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it('(e) answers 429 with Retry-After once one source has spent its burst', async () => {
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 30; i++) {
      const res = await register(hub.url, { lan_ip: `10.50.${i}.1` });
      statuses.push(res.status);
      if (res.status === 429) refused ??= res;
      else await res.body?.cancel();
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(201));
    expect(statuses.slice(20)).toEqual(Array(10).fill(429));
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused!.json()).toMatchObject({ code: 'rate_limited', error: expect.any(String), details: { scope: 'source', per_min: 10, burst: 20 } });
    // No credential was written for the refused ones.
    expect(await hub.hub.store.credentials.get('w191')).toBeDefined();
    expect(await hub.hub.store.credentials.get('w201')).toBeUndefined();
  });
});

describe.skipIf(!requireServices(['postgres', 'redis']))('an enrollment that never links (hub on a manual clock)', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let hub: TestHub;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    backends = await realBackends();
    hub = await startTestHub({ ...backends.env, PAPRIKA_RECONCILE_INTERVAL_S: '60' }, { clock });
  });
  afterAll(async () => {
    await hub?.stop();
    await backends?.drop();
  });

  it('(f) expires after ENROLLMENT_TTL_S with its Redis id claim; a linked one stays', async () => {
    const unused = await (await register(hub.url, { lan_ip: '10.20.30.40' }, '')).json();
    expect(unused.worker_id).toBe('w3040');
    const redis = (hub.hub.registry as unknown as { client: import('ioredis').Redis }).client;
    const claimKey = `${backends.env.PAPRIKA_REDIS_PREFIX}worker:w3040`;
    expect(await redis.hget(claimKey, 'lan_ip')).toBe('10.20.30.40');
    const linked = await rawLink(hub.url, 'w-linked');

    clock.advance((ENROLLMENT_TTL_S - 120) * 1000);
    expect(await hub.hub.store.credentials.get('w3040')).toBeDefined();
    // Each step wakes the reconciler's sleep on the manual clock; bounded by waitFor.
    await waitFor('the unused enrollment expired', async () => {
      clock.advance(60_000);
      return (await hub.hub.store.credentials.get('w3040')) === undefined;
    }, 10_000, 20);
    expect(await redis.exists(claimKey)).toBe(0);
    expect(await redis.sismember(`${backends.env.PAPRIKA_REDIS_PREFIX}workers:index`, 'w3040')).toBe(0);
    expect(await hub.hub.store.credentials.get('w-linked')).toBeDefined();
    // The address enrolls again, as new.
    const again = await register(hub.url, { lan_ip: '10.20.30.40' }, '');
    expect(again.status).toBe(201);
    linked.ws.close();
  });
});
