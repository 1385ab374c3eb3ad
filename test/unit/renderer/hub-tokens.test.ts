import { describe, expect, it } from 'vitest';
import { createApiClient } from '../../../renderer/src/api/client.ts';
import { apiAuthAfter401, tokenScopeFor, tokenToAsk, tokenToSend, type TokenScope } from '../../../renderer/src/model/hub-tokens.ts';
import { connectionStore } from '../../../renderer/src/stores/connection.ts';

describe('which token a hub path needs', () => {
  it.each([
    ['/jobs?limit=200', 'api'],
    ['/jobs', 'api'],
    ['/jobs/0b6f1c1e-0000-4000-8000-000000000000/cancel', 'api'],
    ['/jobs/0b6f1c1e-0000-4000-8000-000000000000/assets/shot.png', 'api'],
    ['/sessions/s1/commands', 'api'],
    ['/admin/workers', 'admin'],
    ['/admin/config', 'admin'],
    ['/jobsx', 'admin'],
    ['/admin/jobs', 'admin'],
  ])('%s → %s', (path, scope) => expect(tokenScopeFor(path)).toBe(scope));
});

describe('which token the console sends', () => {
  it('sends each route group its own token when both are kept', () => {
    const kept = { admin: 'adm', api: 'api' };
    expect(tokenToSend('admin', kept)).toBe('adm');
    expect(tokenToSend('api', kept)).toBe('api');
  });

  it('tries the admin token on /jobs while no API token is kept, never the API token on /admin', () => {
    expect(tokenToSend('api', { admin: 'adm', api: null })).toBe('adm');
    expect(tokenToSend('admin', { admin: null, api: 'api' })).toBeNull();
    expect(tokenToSend('api', { admin: null, api: null })).toBeNull();
  });
});

describe('which token the console asks for', () => {
  it('asks for the admin token first, then the API token, one at a time', () => {
    expect(tokenToAsk(true, 'asking')).toBe('admin');
    expect(tokenToAsk(false, 'asking')).toBe('api');
    expect(tokenToAsk(false, 'ok')).toBeNull();
    expect(tokenToAsk(false, 'dismissed')).toBeNull();
  });

  it('does not ask again from a background poll once put off, but does when the operator opens a job', () => {
    expect(apiAuthAfter401('ok', false)).toBe('asking');
    expect(apiAuthAfter401('dismissed', false)).toBe('dismissed');
    expect(apiAuthAfter401('dismissed', true)).toBe('asking');
    expect(apiAuthAfter401('asking', false)).toBe('asking');
  });

  it('records a refusal with the hub message and clears it at the next answer', () => {
    const s = connectionStore.getState();
    s.apiRefused('Missing or wrong bearer token', false);
    expect(connectionStore.getState()).toMatchObject({ apiAuth: 'asking', apiAuthError: 'Missing or wrong bearer token' });
    s.apiAccepted();
    expect(connectionStore.getState()).toMatchObject({ apiAuth: 'ok', apiAuthError: null });
    const before = connectionStore.getState();
    s.apiAccepted();
    expect(connectionStore.getState()).toBe(before);
  });
});

describe('API client bearer per route group', () => {
  it('sends the admin token to /admin/* and the events socket, the API token to /jobs', async () => {
    const seen: Array<[string, string | null]> = [];
    const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
      seen.push([String(input), (init?.headers as Record<string, string>).authorization ?? null]);
      return new Response(JSON.stringify({ jobs: [], workers: [] }), { status: 200 });
    }) as typeof fetch;
    const tokens: Record<TokenScope, string> = { admin: 'adm', api: 'api' };
    const client = createApiClient({ baseUrl: 'http://hub', getToken: (scope) => tokens[scope], fetchImpl });
    await client.workers();
    await client.jobs({});
    await client.cancelJob('j1');
    await client.laneView('w01', 1);
    expect(seen).toEqual([
      ['http://hub/admin/workers', 'Bearer adm'],
      ['http://hub/jobs?limit=200', 'Bearer api'],
      ['http://hub/jobs/j1/cancel', 'Bearer api'],
      ['http://hub/admin/workers/w01/lanes/1/view', 'Bearer adm'],
    ]);
    // The admin token goes to the event stream as a subprotocol, never in the URL (proxy logs).
    expect(new URL(client.eventsUrl('http://hub')).searchParams.get('token')).toBeNull();
    expect(client.eventsProtocols()).toEqual(['paprika.v1', `bearer.${Buffer.from('adm').toString('base64url')}`]);
  });
});
