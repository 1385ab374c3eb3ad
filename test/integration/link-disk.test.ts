// A new link is not picked before the hub knows the worker's disk: with 0 % assumed, a worker
// on a full disk would take jobs between its hello and its first heartbeat (CI caught the
// cli-slice PAPRIKA_DISK_MAX_PCT test doing so after a hub restart).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/protocol.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { rawLink } from '../harness/raw-link.ts';
import { json, post } from '../harness/http.ts';

describe('a link whose disk the hub does not know yet (PAPRIKA_DISK_MAX_PCT=50)', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_DISK_MAX_PCT: '50', PAPRIKA_REDRIVE_MIN_AGE_S: '0', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.1' });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it('takes no job until a heartbeat reports the disk, then takes the queued one', async () => {
    const link = await rawLink(hub.url, 'w-nodisk', { disk_pct: undefined });
    const job = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    expect(job.status).toBe('queued');
    await new Promise((r) => setTimeout(r, 400)); // several redrive passes
    expect((await fetch(`${hub.url}/jobs/${job.id}`).then(json)).status).toBe('queued');
    expect(link.frames.some((f) => f.type === 'assign')).toBe(false);

    link.ws.send(encode({ type: 'heartbeat', in_flight: 0, cpu_pct: 1, mem_pct: 1, disk_pct: 10, lanes: [] }));
    const assign = await waitFor('assign after the heartbeat', async () => link.frames.find((f) => f.type === 'assign'), 5000, 10);
    expect(assign.job_id).toBe(job.id);
    link.ws.close();
  });

  it('takes no job when the hello reports a disk over the limit, and one at once when under it', async () => {
    const full = await rawLink(hub.url, 'w-fulldisk', { disk_pct: 80 });
    const queued = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    expect(queued.status).toBe('queued');
    const workers = (await fetch(`${hub.url}/admin/workers`).then(json)).workers;
    expect(workers.find((w: any) => w.worker_id === 'w-fulldisk')?.disk_pct).toBe(80);

    const roomy = await rawLink(hub.url, 'w-roomy', { disk_pct: 20 });
    const next = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    // The queued job or the new one goes to w-roomy; none ever goes to w-fulldisk.
    await waitFor('w-roomy busy', async () => roomy.frames.some((f) => f.type === 'assign'), 5000, 10);
    expect([queued.id, next.id]).toContain(roomy.frames.find((f) => f.type === 'assign').job_id);
    expect(full.frames.some((f) => f.type === 'assign')).toBe(false);
    full.ws.close();
    roomy.ws.close();
  });
});
