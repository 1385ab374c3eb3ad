// Wires the window's session: the app:// scheme (console files + API calls passed on to the
// hub with the token), the token on the hub's WebSocket handshake, and nothing else.
import fs from 'node:fs/promises';
import path from 'node:path';
import { net, protocol, session } from 'electron';
import { consoleCsp } from './csp.ts';
import { CONSOLE_SCHEME, contentTypeFor, isHubRequest, routeConsoleRequest } from './navigation-policy.ts';

export interface HubLink {
  url: string;
  token: string | null;
}

/** Must run before app 'ready': the scheme needs fetch and secure-context privileges. */
export function registerConsoleScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: CONSOLE_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
}

const FORWARD_HEADERS = ['accept', 'content-type'];

async function passToHub(req: Request, link: HubLink, hubPath: string): Promise<Response> {
  const headers = new Headers();
  for (const h of FORWARD_HEADERS) {
    const v = req.headers.get(h);
    if (v) headers.set(h, v);
  }
  // The console's own token prompts (localStorage) win over the stored one when present. The
  // stored one is the admin token; on /jobs it is the first try, as the browser console's is,
  // and the console sends the API token it asked for once the hub refuses it.
  const presented = req.headers.get('authorization');
  if (presented) headers.set('authorization', presented);
  else if (link.token) headers.set('authorization', `Bearer ${link.token}`);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return net.fetch(link.url + hubPath, { method: req.method, headers, body: hasBody ? await req.arrayBuffer() : undefined, bypassCustomProtocolHandlers: true });
}

export function installConsoleSession(consoleDir: string, getLink: () => HubLink | null): void {
  const ses = session.defaultSession;
  protocol.handle(CONSOLE_SCHEME, async (req) => {
    const route = routeConsoleRequest(req.url);
    const link = getLink();
    if (route.kind === 'hub') {
      if (!link) return new Response(JSON.stringify({ error: 'hub not started', details: null }), { status: 503, headers: { 'content-type': 'application/json' } });
      try {
        return await passToHub(req, link, route.path);
      } catch (err) {
        return new Response(JSON.stringify({ error: 'hub unreachable', details: String(err) }), { status: 502, headers: { 'content-type': 'application/json' } });
      }
    }
    if (route.kind === 'file') {
      try {
        const data = await fs.readFile(path.join(consoleDir, route.path));
        return new Response(data, { headers: { 'content-type': contentTypeFor(route.path), 'content-security-policy': consoleCsp(link?.url ?? null) } });
      } catch {
        return new Response('not found', { status: 404 });
      }
    }
    return new Response('forbidden', { status: 403 });
  });

  // Browsers cannot set headers on a WebSocket: main adds the bearer to the hub's handshake.
  ses.webRequest.onBeforeSendHeaders((details, callback) => {
    const link = getLink();
    const headers = { ...details.requestHeaders };
    if (link?.token && isHubRequest(details.url, link.url) && !headers.Authorization && !headers.authorization) headers.Authorization = `Bearer ${link.token}`;
    callback({ requestHeaders: headers });
  });

  // Camera, notifications, geolocation…: the console needs none of them.
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
}
