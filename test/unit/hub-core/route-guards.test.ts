// The edge's deciders with tables of cases: which credential opens which group, when the
// forwarded header is believed, which Host names an open hub answers, which requests count as
// cross-site.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../hub-core/src/config.ts';
import { authorize, bearersOf } from '../../../hub-core/src/http/auth.ts';
import { BrowserGuards } from '../../../hub-core/src/http/browser-guards.ts';
import { assetHeaders } from '../../../hub-core/src/http/content-types.ts';
import type { RouteGroup } from '../../../hub-core/src/http/route-groups.ts';

const all = loadConfig({ PAPRIKA_API_TOKEN: 'api', PAPRIKA_ADMIN_TOKEN: 'adm', PAPRIKA_WORKER_TOKEN: 'wrk', PAPRIKA_PEER_TOKEN: 'peer', PAPRIKA_METRICS_TOKEN: 'met' });
const b = (t: string) => `Bearer ${t}`;
const ok = (group: RouteGroup, headers: Record<string, string>, config = all) => {
  try {
    return authorize(config, group, headers);
  } catch {
    return 'refused';
  }
};

describe('authorize', () => {
  it.each([
    ['api', { authorization: b('api') }, true],
    ['api', { authorization: b('adm') }, false],
    ['api', { authorization: b('peer') }, false],
    ['api', { authorization: b('peer'), 'x-paprika-forwarded': 'h2' }, true],
    ['admin', { authorization: b('peer'), 'x-paprika-forwarded': 'h2' }, true],
    ['admin', { authorization: b('api'), 'x-paprika-forwarded': 'h2' }, false],
    ['worker', { authorization: b('peer'), 'x-paprika-forwarded': 'h2' }, false],
    ['metrics', { authorization: b('peer'), 'x-paprika-forwarded': 'h2' }, false],
    ['metrics', { authorization: b('met') }, true],
    ['peer', { authorization: b('adm') }, false],
    ['peer', { authorization: b('peer') }, true],
    ['public', {}, true],
    ['admin', {}, false],
  ] as const)('%s with %j → %s', (group, headers, allowed) => {
    expect(ok(group, headers) !== 'refused').toBe(allowed);
  });

  it('believes X-Paprika-Forwarded only from a caller with the peer token (or while none is set)', () => {
    expect(ok('admin', { authorization: b('adm'), 'x-paprika-forwarded': 'h2' })).toEqual({ peer: false });
    expect(ok('admin', { authorization: b('peer'), 'x-paprika-forwarded': 'h2' })).toEqual({ peer: true });
    expect(ok('admin', { 'x-paprika-forwarded': 'h2' }, loadConfig({}))).toEqual({ peer: true });
  });

  it('reads a bearer subprotocol only on an upgrade', () => {
    const proto = `paprika.v1, bearer.${Buffer.from('adm').toString('base64url')}`;
    expect(bearersOf({ upgrade: 'websocket', 'sec-websocket-protocol': proto })).toEqual(['adm']);
    expect(bearersOf({ 'sec-websocket-protocol': proto })).toEqual([]);
  });
});

describe('BrowserGuards', () => {
  const open = new BrowserGuards(loadConfig({ PAPRIKA_PORT: '8080', PAPRIKA_HUB_URL: 'http://hub.lan:8080' }), true);
  const host = (h: string) => {
    try {
      open.checkHost({ host: h });
      return 'ok';
    } catch (e) {
      return (e as { code: string }).code;
    }
  };
  it.each([
    ['127.0.0.1:8080', 'ok'],
    ['localhost:8080', 'ok'],
    ['LOCALHOST.', 'ok'],
    ['[::1]:8080', 'ok'],
    ['hub.lan:8080', 'ok'],
    ['10.1.2.3', 'ok'],
    ['attacker.example', 'misdirected'],
    ['127.0.0.1.attacker.example', 'misdirected'],
    ['hub.lan.attacker.example:8080', 'misdirected'],
    ['not a host', 'misdirected'],
  ])('Host %s → %s', (h, want) => expect(host(h)).toBe(want));

  it('answers every Host once all tokens are set', () => {
    expect(() => new BrowserGuards(all, false).checkHost({ host: 'anything.example' })).not.toThrow();
  });

  const site = (method: string, headers: Record<string, string>) => {
    try {
      open.checkSite(method, { host: '127.0.0.1:8080', ...headers });
      return 'ok';
    } catch (e) {
      return (e as { code: string }).code;
    }
  };
  it.each([
    ['POST', {}, 'ok'],
    ['POST', { origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'same-origin' }, 'ok'],
    ['POST', { origin: 'http://hub.lan:8080' }, 'ok'],
    ['POST', { origin: 'app://console', 'sec-fetch-site': 'cross-site' }, 'ok'],
    ['POST', { origin: 'http://evil.example' }, 'cross_site'],
    ['POST', { 'sec-fetch-site': 'cross-site' }, 'cross_site'],
    ['DELETE', { 'sec-fetch-site': 'same-site' }, 'cross_site'],
    ['PATCH', { origin: 'null' }, 'cross_site'],
    ['GET', { origin: 'http://evil.example', upgrade: 'websocket' }, 'cross_site'],
    ['GET', { origin: 'http://evil.example' }, 'ok'],
  ] as const)('%s %j → %s', (method, headers, want) => expect(site(method, headers)).toBe(want));
});

describe('assetHeaders', () => {
  it.each([
    ['image/png', 'image/png', false],
    ['image/jpeg', 'image/jpeg', false],
    ['text/html; charset=utf-8', 'application/octet-stream', true],
    ['image/svg+xml', 'application/octet-stream', true],
    ['application/json', 'application/octet-stream', true],
  ])('%s → %s', (type, served, attachment) => {
    const h = assetHeaders(type, 'a.x');
    expect(h['content-type']).toBe(served);
    expect(h['content-security-policy']).toBe('sandbox');
    expect(h['x-content-type-options']).toBe('nosniff');
    expect('content-disposition' in h).toBe(attachment);
  });
});
