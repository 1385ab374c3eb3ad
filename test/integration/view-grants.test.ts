// POST /admin/workers/:id/lanes/:index/view on two hubs sharing Redis and Postgres: the hub
// holding the link signs with that link's key (sent in welcome); the other hub forwards, with
// the caller's Origin in the body; a new link brings a new key and old tokens stop verifying.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyViewToken } from '../../hub-core/src/wire/view-token.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { RAW_CAPS, rawLink } from '../harness/raw-link.ts';
import { requireServices } from '../harness/services.ts';

const ENV = { PAPRIKA_BIND: '127.0.0.1', PAPRIKA_ADMIN_TOKEN: 'adm', PAPRIKA_API_TOKEN: 'api', PAPRIKA_PEER_TOKEN: 'peer', PAPRIKA_HUB_HEARTBEAT_S: '0.2' };
const VIEW = 'http://10.9.8.7:4100/lanes/0/view';
const tokenOf = (url: string) => new URL(url).searchParams.get('vt');

describe.skipIf(!requireServices(['postgres', 'redis']))('live-view grants across hubs', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let a: TestHub;
  let b: TestHub;
  const links: Array<Awaited<ReturnType<typeof rawLink>>> = [];
  const ask = (hub: TestHub, worker: string, lane: number, headers: Record<string, string> = { authorization: 'Bearer adm' }) => fetch(`${hub.url}/admin/workers/${worker}/lanes/${lane}/view`, { method: 'POST', headers });

  beforeAll(async () => {
    backends = await realBackends();
    a = await startTestHub({ ...backends.env, ...ENV });
    b = await startTestHub({ ...backends.env, ...ENV });
    links.push(await rawLink(a.url, 'w-view', { capabilities: { ...RAW_CAPS, max_concurrent: 2, lane_novnc_urls: [VIEW, 'sim://raw/1'] } }));
    await waitFor('hub b sees hub a', async () => (await b.hub.forwarder.hubUrl(a.hub.config.hubId)) !== undefined, 10_000);
    await waitFor('owner in redis', async () => (await b.hub.registry.getOwner('w-view')) === a.hub.config.hubId, 10_000);
  }, 60_000);

  afterAll(async () => {
    for (const l of links) l.ws.close();
    await b?.stop();
    await a?.stop();
    await backends?.drop();
  });

  const keyOf = (l: Awaited<ReturnType<typeof rawLink>>) => l.frames.find((f) => f.type === 'welcome').view_key as string;

  it('signs on the hub holding the link with the key it sent in welcome, for that worker and lane, for 60 s', async () => {
    const res = await ask(a, 'w-view', 0);
    expect(res.status).toBe(200);
    const grant = await res.json();
    expect(grant.url.startsWith(`${VIEW}?vt=`)).toBe(true);
    const check = verifyViewToken(tokenOf(grant.url), keyOf(links[0]), { workerId: 'w-view', lane: 0, nowMs: Date.now() });
    expect(check.ok).toBe(true);
    expect(Date.parse(grant.expires_at) - Date.now()).toBeGreaterThan(50_000);
    expect(verifyViewToken(tokenOf(grant.url), keyOf(links[0]), { workerId: 'w-view', lane: 0, nowMs: Date.parse(grant.expires_at) })).toEqual({ ok: false, reason: 'expired' });
  });

  it('forwards from a hub that does not hold the link, and records the Origin of the first request', async () => {
    // The console's own origin (served by hub b): a foreign one would be refused as cross-site.
    const consoleOrigin = new URL(b.url).origin;
    const res = await ask(b, 'w-view', 0, { authorization: 'Bearer adm', origin: consoleOrigin });
    expect(res.status).toBe(200);
    const check = verifyViewToken(tokenOf((await res.json()).url), keyOf(links[0]), { workerId: 'w-view', lane: 0, nowMs: Date.now() });
    expect(check).toMatchObject({ ok: true, payload: { origin: consoleOrigin } });
  });

  it('refuses callers without the admin token, lanes that do not exist or have no live view, and unlinked workers', async () => {
    for (const hub of [a, b]) {
      expect((await ask(hub, 'w-view', 0, { authorization: 'Bearer api' })).status).toBe(401);
      expect((await ask(hub, 'w-view', 0, {})).status).toBe(401);
    }
    expect(await (await ask(a, 'w-view', 5)).json()).toMatchObject({ code: 'not_found' });
    const sim = await ask(b, 'w-view', 1);
    expect(sim.status).toBe(404);
    expect((await sim.json()).code).toBe('no_live_view');
    const gone = await ask(b, 'w-nobody', 0);
    expect(gone.status).toBe(409);
    expect((await gone.json()).code).toBe('worker_offline');
  });

  it('gives a new link a new key: tokens of the old one no longer verify', async () => {
    const old = await (await ask(a, 'w-view', 0)).json();
    links.push(await rawLink(a.url, 'w-view', { capabilities: { ...RAW_CAPS, max_concurrent: 2, lane_novnc_urls: [VIEW, 'sim://raw/1'] } }));
    const newKey = keyOf(links[1]);
    expect(newKey).not.toBe(keyOf(links[0]));
    expect(verifyViewToken(tokenOf(old.url), newKey, { workerId: 'w-view', lane: 0, nowMs: Date.now() })).toEqual({ ok: false, reason: 'bad_signature' });
    const fresh = await (await ask(a, 'w-view', 0)).json();
    expect(verifyViewToken(tokenOf(fresh.url), newKey, { workerId: 'w-view', lane: 0, nowMs: Date.now() }).ok).toBe(true);
  });
});
