// Opening a lane's live view: the console asks the hub for a tokened URL at the click and
// opens that, never the bare view_url from the fleet table.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from '../../../renderer/src/api/client.ts';
import { ConsoleActions } from '../../../renderer/src/live/console-actions.ts';
import type { LiveFeed } from '../../../renderer/src/live/live-feed.ts';
import { fleetStore } from '../../../renderer/src/stores/fleet.ts';

const grant = { url: 'http://10.0.0.5:4100/lanes/1/view?vt=abc.def', expires_at: '2026-12-03T12:00:00.000Z' };

function clientAnswering(status: number, body: unknown, seen: Array<[string, string]> = []) {
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    seen.push([init?.method ?? 'GET', String(input)]);
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return createApiClient({ baseUrl: 'http://hub', getToken: () => 'adm', fetchImpl });
}

describe('lane live view from the console', () => {
  const g = globalThis as unknown as { paprika?: { openExternal(url: string): Promise<boolean> } };
  afterEach(() => {
    delete g.paprika;
    fleetStore.getState().setActionError(null);
  });

  it('POSTs /admin/workers/:id/lanes/:index/view and returns the tokened URL', async () => {
    const seen: Array<[string, string]> = [];
    expect(await clientAnswering(200, grant, seen).laneView('w50150', 1)).toEqual(grant);
    expect(seen).toEqual([['POST', 'http://hub/admin/workers/w50150/lanes/1/view']]);
  });

  it('surfaces a refusal as an ApiError with the status', async () => {
    const err = await clientAnswering(401, { error: 'Missing or wrong bearer token', code: 'unauthorized', details: null }).laneView('w1', 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).unauthorized).toBe(true);
  });

  it('opens the URL the hub granted (desktop app: in the system browser)', async () => {
    const opened: string[] = [];
    g.paprika = { openExternal: async (url) => (opened.push(url), true) };
    await new ConsoleActions(clientAnswering(200, grant), {} as LiveFeed).openLaneView('w50150', 1);
    expect(opened).toEqual([grant.url]);
  });

  it('opens nothing and says why when the hub refuses', async () => {
    const opened: string[] = [];
    g.paprika = { openExternal: async (url) => (opened.push(url), true) };
    await new ConsoleActions(clientAnswering(409, { error: 'The worker is not linked to a live hub', code: 'worker_offline', details: null }), {} as LiveFeed).openLaneView('w50150', 1);
    expect(opened).toEqual([]);
    expect(fleetStore.getState().actionError).toMatch(/w50150 lane 1 live view: The worker is not linked/);
  });
});
