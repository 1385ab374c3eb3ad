// What a CDP client may ask of its browser (cdp-guard.ts): no local files or browser pages by
// any spelling, no host files into a page, no proxy of its own, downloads only into its profile,
// nothing that skips the check; everything an ordinary Puppeteer or Playwright script sends passes.
import { describe, expect, it } from 'vitest';
import { guardCdpCommand } from '../../../worker-agent/src/cdp/cdp-guard.ts';

const DL = '/tmp/paprika-cdp-x/Downloads';
const guard = (cmd: unknown) => guardCdpCommand(typeof cmd === 'string' ? cmd : JSON.stringify(cmd), DL);
const refusal = (cmd: unknown) => {
  const v = guard(cmd);
  if (!('refuse' in v)) throw new Error(`passed: ${v.pass}`);
  return JSON.parse(v.refuse) as { id?: number; sessionId?: string; error: { code: number; message: string } };
};

describe('guardCdpCommand', () => {
  it.each([
    ['Target.createTarget about:blank', { id: 1, method: 'Target.createTarget', params: { url: 'about:blank' } }],
    ['Page.navigate http', { id: 2, sessionId: 'S', method: 'Page.navigate', params: { url: 'http://127.0.0.1:9/x' } }],
    ['Runtime.evaluate', { id: 3, sessionId: 'S', method: 'Runtime.evaluate', params: { expression: 'document.title', returnByValue: true } }],
    ['a plain context', { id: 4, method: 'Target.createBrowserContext', params: { disposeOnDetach: true } }],
    ['Browser.getVersion without params', { id: 5, method: 'Browser.getVersion' }],
    ['a data: URL', { id: 6, sessionId: 'S', method: 'Page.navigate', params: { url: 'data:text/html,<p>hi' } }],
  ])('passes %s unchanged', (_name, cmd) => {
    expect(guard(cmd)).toEqual({ pass: JSON.stringify(cmd) });
  });

  it.each([
    ['file:///etc/passwd'],
    ['FILE:///etc/passwd'],
    [' \u0000file:///etc/passwd'],
    ['fi\tle:///etc/passwd'],
    ['view-source:file:///etc/passwd'],
    ['chrome://settings'],
    ['devtools://devtools/bundled/inspector.html'],
    ['filesystem:http://x/temporary/a'],
  ])('refuses a command naming %j, keeping its id and session', (url) => {
    const r = refusal({ id: 7, sessionId: 'S', method: 'Page.navigate', params: { url } });
    expect(r).toMatchObject({ id: 7, sessionId: 'S', error: { code: -32000, message: expect.stringContaining('local files and browser pages are not reachable') } });
  });

  it('finds a local URL at any depth, in any method (a new target, a fetched resource, a rewritten request)', () => {
    expect(refusal({ id: 1, method: 'Target.createTarget', params: { url: 'file:///' } }).id).toBe(1);
    expect(refusal({ id: 2, method: 'Network.loadNetworkResource', params: { frameId: 'F', url: 'file:///etc/hostname', options: {} } }).id).toBe(2);
    expect(refusal({ id: 3, method: 'Fetch.continueRequest', params: { requestId: 'r', url: 'file:///x' } }).id).toBe(3);
    expect(refusal({ id: 4, method: 'X.y', params: { a: [{ b: [{ c: 'file:///deep' }] }] } }).id).toBe(4);
  });

  it('a deeply nested command is checked without overflowing the stack, and refused', () => {
    const nested = (leaf: string) => '['.repeat(100_000) + JSON.stringify(leaf) + ']'.repeat(100_000);
    expect(refusal(`{"id":1,"method":"X.y","params":{"a":${nested('file:///x')}}}`).error.message).toMatch(/not reachable/);
    expect(refusal(`{"id":2,"method":"X.y","params":{"a":${nested('http://ok/')}}}`)).toMatchObject({ id: 2, error: { message: 'the command is nested too deeply' } });
  });

  it.each([['DOM.setFileInputFiles'], ['Page.handleFileChooser'], ['Target.sendMessageToTarget'], ['Target.exposeDevToolsProtocol'], ['Extensions.loadUnpacked'], ['PWA.launchFilesInApp'], ['Target.setRemoteLocations'], ['Tethering.bind'], ['Cast.enable']])('refuses %s whatever its params', (method) => {
    expect(refusal({ id: 9, method, params: {} }).error.message).toMatch(new RegExp(`^${method.replace('.', '\\.')} is refused`));
  });

  it.each([['proxyServer', 'direct://'], ['proxyBypassList', '<-loopback>'], ['originsWithUniversalNetworkAccess', ['http://x']]])('refuses a browser context with %s (the lane\'s egress proxy stays)', (key, value) => {
    expect(refusal({ id: 1, method: 'Target.createBrowserContext', params: { [key]: value } }).error.message).toContain(key);
  });

  it('refuses a drag event carrying host files, passes one without', () => {
    expect(refusal({ id: 1, method: 'Input.dispatchDragEvent', params: { type: 'drop', x: 1, y: 1, data: { items: [], files: ['/etc/passwd'], dragOperationsMask: 1 } } }).id).toBe(1);
    expect('pass' in guard({ id: 2, method: 'Input.dispatchDragEvent', params: { type: 'drop', x: 1, y: 1, data: { items: [], dragOperationsMask: 1 } } })).toBe(true);
  });

  it('moves a download path into the client\'s profile (Playwright names one of its own machine)', () => {
    for (const method of ['Browser.setDownloadBehavior', 'Page.setDownloadBehavior']) {
      const v = guard({ id: 1, method, params: { behavior: 'allowAndName', downloadPath: '/root/.ssh', eventsEnabled: true } });
      expect(v).toEqual({ pass: JSON.stringify({ id: 1, method, params: { behavior: 'allowAndName', downloadPath: DL, eventsEnabled: true } }) });
    }
  });

  it('sends Chrome what it checked: with a duplicate key, the value checked is the only one sent', () => {
    const v = guard('{"id":1,"method":"Page.navigate","params":{"url":"file:///etc/passwd"},"params":{"url":"http://ok/"}}');
    expect(v).toEqual({ pass: '{"id":1,"method":"Page.navigate","params":{"url":"http://ok/"}}' });
  });

  it('refuses what is not a command', () => {
    expect(refusal('not json').error.message).toBe('not a JSON command');
    expect(refusal('[1]').error.message).toMatch(/no method/);
    expect(refusal({ id: 3, method: 'Page.navigate', params: 'file:///' }).error.message).toBe('params must be an object');
  });
});
