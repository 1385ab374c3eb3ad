// What a CDP client may ask of its browser. A client drives a real Chrome on the worker's host,
// as the agent's user: without this check a client could open file:// pages (the worker's
// credential file, another client's profile), upload host files into a page, write downloads
// anywhere, give its own context a proxy that skips the lane's egress rules, or hand the
// protocol to page script. The check runs in the tunnel, the last hop before Chrome, so it holds
// whichever hub or path the client came through; Chrome then reads exactly what was checked
// (the command is re-serialised: no duplicate key can mean one thing here and another there).

/** Chrome's error code for a refused command (as for an unknown method). */
const REFUSED = -32000;

/** Methods no client gets: each reads host files, writes them, or lets something skip this check. */
const REFUSED_METHODS: Record<string, string> = {
  'DOM.setFileInputFiles': 'it would hand files of the worker host to the page',
  'Page.handleFileChooser': 'it would hand files of the worker host to the page',
  'Target.sendMessageToTarget': 'unflattened target messages are not checked; use flattened sessions (Puppeteer and Playwright do)',
  'Target.exposeDevToolsProtocol': "it would give page script the browser's protocol, past this check",
  'Target.openDevTools': 'DevTools windows are not served',
  // The browser would poll /json/list on any host and port it is given, itself, past the lane's egress proxy.
  'Target.setRemoteLocations': "the browser would connect to those hosts itself, past the lane's egress proxy",
};

/** Whole domains no client gets. */
const REFUSED_DOMAINS: Record<string, string> = {
  Extensions: 'extensions would load code from paths on the worker host',
  PWA: 'web-app installs and file launches reach the worker host',
  // Both open connections from the browser process (port forwarding; sink discovery), past the lane's egress proxy.
  Tethering: "it would open ports on the worker host, past the lane's egress proxy",
  Cast: "sink discovery reaches the worker's network, past the lane's egress proxy",
};

/** Browser-context options that would move its traffic off the lane's egress proxy. */
const CONTEXT_EGRESS_KEYS = ['proxyServer', 'proxyBypassList', 'originsWithUniversalNetworkAccess'];

/**
 * Schemes a client may not name anywhere in a command: local files and the browser's own pages.
 * Chrome drops leading control characters and spaces and any tab or newline in a URL; so does the check.
 */
const LOCAL_SCHEME = /^(?:file|filesystem|chrome|chrome-untrusted|chrome-extension|chrome-search|devtools|view-source)\s*:/i;

export type CdpVerdict = { pass: string } | { refuse: string };

interface Command {
  id?: unknown;
  sessionId?: unknown;
  method?: unknown;
  params?: unknown;
}

/**
 * The command to send on to Chrome (`pass`), or the error reply for the client (`refuse`).
 * `downloadDir`: where this client's downloads go (inside its own profile, removed with it).
 */
export function guardCdpCommand(text: string, downloadDir: string): CdpVerdict {
  let cmd: Command;
  try {
    cmd = JSON.parse(text) as Command;
  } catch {
    return { refuse: reply({}, 'not a JSON command') };
  }
  if (typeof cmd !== 'object' || cmd === null || Array.isArray(cmd) || typeof cmd.method !== 'string') return { refuse: reply({}, 'not a CDP command (no method)') };
  const method = cmd.method;
  const why = REFUSED_METHODS[method] ?? REFUSED_DOMAINS[method.slice(0, method.indexOf('.'))];
  if (why) return { refuse: reply(cmd, `${method} is refused on Paprika's CDP: ${why}`) };
  const params = cmd.params;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return { refuse: reply(cmd, 'params must be an object') };
  const p = (params ?? {}) as Record<string, unknown>;
  if (method === 'Target.createBrowserContext') {
    const key = CONTEXT_EGRESS_KEYS.find((k) => p[k] !== undefined);
    if (key) return { refuse: reply(cmd, `Target.createBrowserContext with ${key} is refused on Paprika's CDP: every context goes through the lane's egress proxy`) };
  }
  if (method === 'Input.dispatchDragEvent') {
    const files = (p.data as { files?: unknown } | undefined)?.files;
    if (Array.isArray(files) && files.length > 0) return { refuse: reply(cmd, "Input.dispatchDragEvent with files is refused on Paprika's CDP: it would hand files of the worker host to the page") };
  }
  const local = localUrlIn(p);
  if (local !== undefined) return { refuse: reply(cmd, `${method} names ${JSON.stringify(local.slice(0, 100))}: local files and browser pages are not reachable through Paprika's CDP`) };
  // Downloads land in the client's own profile, whatever path it names (Playwright names one of
  // its own machine's): never elsewhere on the worker host.
  if ((method === 'Browser.setDownloadBehavior' || method === 'Page.setDownloadBehavior') && p.downloadPath !== undefined) p.downloadPath = downloadDir;
  try {
    return { pass: JSON.stringify(cmd) };
  } catch {
    return { refuse: reply(cmd, 'the command is nested too deeply') }; // JSON.stringify recurses; no CDP command nests like this
  }
}

/** The first string anywhere in `value` that names a local scheme. Iterative: a deeply nested command cannot overflow the stack. */
function localUrlIn(value: unknown): string | undefined {
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v === 'string') {
      if (LOCAL_SCHEME.test(v.replace(/^[\x00-\x20]+/, '').replace(/[\t\n\r]/g, ''))) return v;
    } else if (typeof v === 'object' && v !== null) {
      for (const item of Array.isArray(v) ? v : Object.values(v)) todo.push(item);
    }
  }
  return undefined;
}

function reply(cmd: Command, message: string): string {
  const out: Record<string, unknown> = { error: { code: REFUSED, message } };
  if (typeof cmd.id === 'number') out.id = cmd.id;
  if (typeof cmd.sessionId === 'string') out.sessionId = cmd.sessionId;
  return JSON.stringify(out);
}
