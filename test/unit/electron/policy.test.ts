import { describe, expect, it } from 'vitest';
import { consoleCsp } from '../../../electron/csp.ts';
import { chooseHubTarget, embeddedHubEnv } from '../../../electron/hub-mode.ts';
import { canOpenExternally, isConsoleUrl, isHubRequest, routeConsoleRequest } from '../../../electron/navigation-policy.ts';
import { DEFAULT_SETTINGS } from '../../../electron/settings.ts';
import { canSeal, openToken, sealToken, type SafeStorageLike } from '../../../electron/token-vault.ts';
import { createApiClient } from '../../../renderer/src/api/client.ts';
import { tokenKey } from '../../../renderer/src/model/hub-tokens.ts';

describe('hub mode selection', () => {
  const remote = { ...DEFAULT_SETTINGS, mode: 'remote' as const, remoteUrl: 'https://hub.example' };

  it('follows the settings file by default', () => {
    expect(chooseHubTarget(DEFAULT_SETTINGS, []).target).toEqual({ kind: 'embedded', port: 8080 });
    expect(chooseHubTarget(remote, []).target).toEqual({ kind: 'remote', url: 'https://hub.example' });
  });

  it('lets --hub URL and --embedded override it for the session', () => {
    expect(chooseHubTarget(DEFAULT_SETTINGS, ['--hub', 'http://10.0.0.2:8080/']).target).toEqual({ kind: 'remote', url: 'http://10.0.0.2:8080' });
    expect(chooseHubTarget(DEFAULT_SETTINGS, ['--hub=http://h:1']).target).toEqual({ kind: 'remote', url: 'http://h:1' });
    expect(chooseHubTarget(remote, ['--embedded']).target.kind).toBe('embedded');
  });

  it('ignores a bad --hub with a note', () => {
    const c = chooseHubTarget(DEFAULT_SETTINGS, ['--hub', 'file:///x']);
    expect(c.target.kind).toBe('embedded');
    expect(c.notes).toHaveLength(1);
  });

  it('binds the embedded hub to loopback on the chosen port and data dir', () => {
    expect(embeddedHubEnv({ PAPRIKA_PORT: '1', OTHER: 'x' }, 8081, '/d')).toEqual({ PAPRIKA_PORT: '8081', PAPRIKA_DATA_DIR: '/d', PAPRIKA_BIND: '127.0.0.1', OTHER: 'x' });
  });
});

describe('navigation and URL allow-list', () => {
  it('allows in-app navigation only within app://console', () => {
    expect(isConsoleUrl('app://console/index.html#/jobs')).toBe(true);
    expect(isConsoleUrl('app://evil/index.html')).toBe(false);
    expect(isConsoleUrl('https://example.com/')).toBe(false);
  });

  it.each([
    ['http://10.10.50.150:6080/vnc.html', true],
    ['https://example.com', true],
    ['file:///etc/passwd', false],
    ['javascript:alert(1)', false],
    ['smb://host/share', false],
    ['http://user:pw@host/', false],
    ['nonsense', false],
  ])('openExternal %s → %s', (url, ok) => expect(canOpenExternally(url)).toBe(ok));

  it('sends the token only to the configured hub, over http(s) or ws(s)', () => {
    expect(isHubRequest('ws://127.0.0.1:8080/admin/events', 'http://127.0.0.1:8080')).toBe(true);
    expect(isHubRequest('wss://hub.example/admin/events', 'https://hub.example')).toBe(true);
    expect(isHubRequest('ws://hub.example/admin/events', 'https://hub.example')).toBe(false);
    expect(isHubRequest('http://127.0.0.1:8081/admin', 'http://127.0.0.1:8080')).toBe(false);
    expect(isHubRequest('https://evil.example/', 'https://hub.example')).toBe(false);
  });

  it('routes console files and the API paths the console uses; denies everything else', () => {
    expect(routeConsoleRequest('app://console/')).toEqual({ kind: 'file', path: 'index.html' });
    expect(routeConsoleRequest('app://console/assets/index-abc.js')).toEqual({ kind: 'file', path: 'assets/index-abc.js' });
    expect(routeConsoleRequest('app://console/admin/workers')).toEqual({ kind: 'hub', path: '/admin/workers' });
    expect(routeConsoleRequest('app://console/admin/workers/w50150')).toEqual({ kind: 'hub', path: '/admin/workers/w50150' });
    expect(routeConsoleRequest('app://console/admin/workers/w50150/lanes/1/view')).toEqual({ kind: 'hub', path: '/admin/workers/w50150/lanes/1/view' });
    expect(routeConsoleRequest('app://console/admin/workers/w50150/lanes/x/view').kind).toBe('deny');
    expect(routeConsoleRequest('app://console/jobs?status=failed&limit=200')).toEqual({ kind: 'hub', path: '/jobs?status=failed&limit=200' });
    const id = '0b9c2f3e-1111-4111-8111-111111111111';
    expect(routeConsoleRequest(`app://console/jobs/${id}/assets/screenshot.png`).kind).toBe('hub');
    expect(routeConsoleRequest('app://console/assets/..%2F..%2Fmain.js').kind).toBe('deny');
    expect(routeConsoleRequest('app://console/workers/register').kind).toBe('deny');
    expect(routeConsoleRequest('app://console/internal/jobs/x/assign').kind).toBe('deny');
    expect(routeConsoleRequest('app://other/admin/workers').kind).toBe('deny');
  });
});

describe('content security policy', () => {
  it('allows scripts only from the bundle and the socket only to the hub', () => {
    const csp = consoleCsp('https://hub.example:8443');
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(csp).toContain("connect-src 'self' wss://hub.example:8443");
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(consoleCsp(null)).toContain("connect-src 'self';");
  });
});

describe('token vault', () => {
  const fake = (available: boolean): SafeStorageLike => ({
    isEncryptionAvailable: () => available,
    encryptString: (s) => Buffer.from(s.split('').reverse().join('')),
    decryptString: (b) => {
      if (b.toString() === 'bad') throw new Error('cannot decrypt');
      return b.toString().split('').reverse().join('');
    },
  });

  it('round-trips through the OS keychain and never stores plaintext', () => {
    const c = sealToken(fake(true), 'secret');
    expect(c).not.toContain('secret');
    expect(openToken(fake(true), c)).toBe('secret');
  });

  it('gives null when encryption is unavailable or the ciphertext is unreadable', () => {
    expect(sealToken(fake(false), 'secret')).toBeNull();
    expect(openToken(fake(false), 'abc')).toBeNull();
    expect(openToken(fake(true), Buffer.from('bad').toString('base64'))).toBeNull();
    expect(openToken(fake(true), null)).toBeNull();
  });

  it("treats Linux's keyring-less backend (a password built into Chromium) as no encryption", () => {
    const linux = (backend: string): SafeStorageLike => ({ ...fake(true), getSelectedStorageBackend: () => backend });
    expect(canSeal(linux('basic_text'))).toBe(false);
    expect(sealToken(linux('basic_text'), 'secret')).toBeNull();
    expect(canSeal(linux('gnome_libsecret'))).toBe(true);
    expect(canSeal(fake(true))).toBe(true); // macOS, Windows: no such method
  });
});

describe('tokens typed into the console', () => {
  it('are kept per hub in the desktop app (one origin for every hub), under the plain key in a browser', () => {
    expect(tokenKey('admin', '')).toBe('paprika.adminToken');
    expect(tokenKey('api', 'https://prod.example')).not.toBe(tokenKey('api', 'http://test.example'));
    expect(tokenKey('admin', 'https://prod.example')).not.toBe(tokenKey('admin', ''));
  });
});

describe("the console's API calls in the desktop app", () => {
  it('every HTTP call the console makes is passed on to the hub', async () => {
    const seen: string[] = [];
    const fetchImpl = (async (input: RequestInfo | URL) => {
      seen.push(String(input));
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    const client = createApiClient({ baseUrl: 'app://console', getToken: () => null, fetchImpl });
    const id = '0b9c2f3e-1111-4111-8111-111111111111';
    const calls: Record<string, () => Promise<unknown>> = {
      config: () => client.config(),
      workers: () => client.workers(),
      hubs: () => client.hubs(),
      stats: () => client.stats(),
      workerDetail: () => client.workerDetail('w-1'),
      queue: () => client.queue(),
      statsHistory: () => client.statsHistory('1h'),
      setWorkerStatus: () => client.setWorkerStatus('w-1', 'drain'),
      resetWorkerCredentials: () => client.resetWorkerCredentials('w-1'),
      forgetWorker: () => client.forgetWorker('w-1'),
      laneView: () => client.laneView('w-1', 2),
      jobs: () => client.jobs({ status: 'failed', before: 'x' }),
      job: () => client.job(id),
      cancelJob: () => client.cancelJob(id),
      rerunJob: () => client.rerunJob(id),
      assetBlob: () => client.assetBlob(id, 'screenshot.png'),
    };
    // Every HTTP method of the client is listed (the socket URLs are not fetched).
    const notHttp = ['eventsUrl', 'wallUrl', 'eventsProtocols'];
    expect(Object.keys(client).filter((k) => !notHttp.includes(k)).sort()).toEqual(Object.keys(calls).sort());
    for (const call of Object.values(calls)) await call();
    const refused = seen.filter((url) => routeConsoleRequest(url).kind !== 'hub');
    expect(refused).toEqual([]);
  });
});
