// An id's address claim in Redis (the `lan_ip` of paprika:worker:{id}) is the registration's.
// A hello's lan_ip was published over it: a worker enrolled from A that said hello as B left
// A unclaimed, and the next registration from A got a second id (the long form) and a
// credential of its own. Now the claim stays A's, and a registration from A after such a
// hello answers as it did before it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { openRawLink, provenHello } from '../harness/raw-link.ts';
import { requireServices } from '../harness/services.ts';

const A = '10.61.7.8';
const B = '10.61.9.9';

function register(hubUrl: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${hubUrl}/workers/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hostname: 'h', ...body }) });
}

describe.skipIf(!requireServices(['postgres', 'redis']))('the address claim of a worker id (Postgres + Redis)', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let hub: TestHub;
  let redis: Redis;
  const claimOf = (id: string) => redis.hget(`${backends.env.PAPRIKA_REDIS_PREFIX}worker:${id}`, 'lan_ip');
  const publishedAt = (id: string) => redis.hget(`${backends.env.PAPRIKA_REDIS_PREFIX}worker:${id}`, 'last_seen');

  beforeAll(async () => {
    backends = await realBackends();
    hub = await startTestHub({ ...backends.env, PAPRIKA_HEARTBEAT_S: '0.2' });
    redis = (hub.hub.registry as unknown as { client: Redis }).client;
  });
  afterAll(async () => {
    await hub?.stop();
    await backends?.drop();
  });

  it('a hello naming another lan_ip does not move the claim: a registration from the enrolled address gets no second id', async () => {
    const first = await register(hub.url, { lan_ip: A });
    expect(first.status).toBe(201);
    const { worker_id: id, secret } = await first.json();
    expect(id).toBe('w78');
    // Before any hello: what a registration from A answers (the id is enrolled).
    const before = await register(hub.url, { lan_ip: A });
    expect(before.status).toBe(409);
    const beforeBody = await before.json();
    expect(beforeBody).toMatchObject({ code: 'worker_enrolled', details: { worker_id: id } });

    const link = await openRawLink(hub.url, id);
    link.ws.send(provenHello(id, secret, link.nonce, { lan_ip: B }));
    await waitFor('welcome', async () => link.frames.some((f) => f.type === 'welcome'), 5000, 10);
    // Heartbeats keep publishing the row; wait until one has (a publish writes last_seen).
    await waitFor('the link published to Redis', async () => (await publishedAt(id)) !== null, 10_000, 20);
    const firstPublish = Number(await publishedAt(id));
    link.ws.send(JSON.stringify({ type: 'heartbeat', v: 1, in_flight: 0, cpu_pct: 1, mem_pct: 1, disk_pct: 5, lanes: [] }));
    await waitFor('a later publish', async () => Number(await publishedAt(id)) > firstPublish, 10_000, 20);
    expect(await claimOf(id)).toBe(A);
    expect(hub.hub.localLinks.get(id)!.meta.lanIp).toBe(A);

    // From A, exactly as before the hello: 409 naming the same id, no new credential.
    const after = await register(hub.url, { lan_ip: A });
    expect(after.status).toBe(409);
    expect(await after.json()).toEqual(beforeBody);
    expect(await hub.hub.store.credentials.get('w10-61-7-8')).toBeUndefined();
    // With its secret, A is re-registered under the same id.
    const proven = await register(hub.url, { lan_ip: A, secret });
    expect(proven.status).toBe(200);
    expect((await proven.json()).worker_id).toBe(id);

    // A hello without lan_ip does not empty the claim either.
    link.ws.close();
    const again = await openRawLink(hub.url, id);
    again.ws.send(provenHello(id, secret, again.nonce));
    await waitFor('second welcome', async () => again.frames.some((f) => f.type === 'welcome'), 5000, 10);
    const secondPublish = Number(await publishedAt(id));
    again.ws.send(JSON.stringify({ type: 'heartbeat', v: 1, in_flight: 0, cpu_pct: 1, mem_pct: 1, disk_pct: 5, lanes: [] }));
    await waitFor('a publish of the second link', async () => Number(await publishedAt(id)) > secondPublish, 10_000, 20);
    expect(await claimOf(id)).toBe(A);
    expect((await register(hub.url, { lan_ip: A })).status).toBe(409);
    again.ws.close();
  });
});
