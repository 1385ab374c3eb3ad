// What the window may load, open and send where. The console lives at app://console/ and
// never navigates; links (lane live views) go to the system browser, and only if http(s).

export const CONSOLE_SCHEME = 'app';
export const CONSOLE_HOST = 'console';
export const CONSOLE_ORIGIN = `${CONSOLE_SCHEME}://${CONSOLE_HOST}`;
export const CONSOLE_START_URL = `${CONSOLE_ORIGIN}/index.html`;

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** In-app navigation is allowed only within the console itself (e.g. reload, #/jobs). */
export function isConsoleUrl(url: string): boolean {
  const u = parse(url);
  return u !== null && u.protocol === `${CONSOLE_SCHEME}:` && u.host === CONSOLE_HOST;
}

/** shell.openExternal only for http(s) without credentials: never file:, javascript:, custom schemes. */
export function canOpenExternally(url: string): boolean {
  const u = parse(url);
  return u !== null && (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
}

/** The hub's WebSocket origin for the live feed (ws for http, wss for https). */
export function hubSocketOrigin(hubUrl: string): string {
  const u = new URL(hubUrl);
  return `${u.protocol === 'https:' ? 'wss:' : 'ws:'}//${u.host}`;
}

/** A request bound for the configured hub (HTTP or WebSocket): the only place the token goes. */
export function isHubRequest(url: string, hubUrl: string): boolean {
  const u = parse(url);
  const hub = parse(hubUrl);
  if (!u || !hub) return false;
  const httpish = u.protocol === 'http:' || u.protocol === 'https:' ? u.protocol : u.protocol === 'ws:' ? 'http:' : u.protocol === 'wss:' ? 'https:' : null;
  return httpish === hub.protocol && u.host === hub.host;
}

export type ConsoleRoute = { kind: 'file'; path: string } | { kind: 'hub'; path: string } | { kind: 'deny' };

/** API paths the console uses (renderer/src/api/client.ts; a test calls every one); everything else on the hub is not the window's business. */
const HUB_PATHS = [
  /^\/admin\/(config|workers|hubs|stats|stats\/history|queue)$/,
  /^\/admin\/workers\/[A-Za-z0-9_-]{1,100}(\/detail|\/reset-credentials|\/lanes\/\d{1,4}\/view)?$/,
  /^\/jobs$/,
  /^\/jobs\/[0-9a-f-]{36}(\/cancel|\/assets\/[A-Za-z0-9_.-]{1,200})?$/,
];

/**
 * app://console/<path>: the built console's files, or an API call passed on to the hub by
 * the main process (so the renderer's calls are same-origin, and the token stays in main).
 */
export function routeConsoleRequest(url: string): ConsoleRoute {
  const u = parse(url);
  if (!u || !isConsoleUrl(url)) return { kind: 'deny' };
  const p = decodeURIComponent(u.pathname);
  if (HUB_PATHS.some((re) => re.test(p))) return { kind: 'hub', path: p + u.search };
  if (p === '/' || p === '/index.html') return { kind: 'file', path: 'index.html' };
  // Only the built assets, and no way out of the folder.
  if (/^\/assets\/[A-Za-z0-9_.-]+$/.test(p) && !p.includes('..')) return { kind: 'file', path: p.slice(1) };
  return { kind: 'deny' };
}

export { contentTypeFor } from '../hub-core/src/http/content-types.ts';
