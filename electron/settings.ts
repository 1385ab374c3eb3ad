// The desktop app's settings file (userData/settings.json): parsed defensively, validated,
// with the admin token only ever stored as safeStorage ciphertext. No 'electron' import, so
// every rule here is unit-tested in plain Node.

export type HubMode = 'embedded' | 'remote';

export interface StoredSettings {
  mode: HubMode;
  /** Normalised http(s) URL of a remote hub, '' when none. */
  remoteUrl: string;
  embeddedPort: number;
  /** base64 of safeStorage.encryptString(token); never the token itself. */
  tokenCipher: string | null;
  /** The hub URL the token was entered for: it is sent to that hub only (never to a `--hub` or a new URL). */
  tokenHub: string | null;
}

export const DEFAULT_SETTINGS: Readonly<StoredSettings> = Object.freeze({ mode: 'embedded', remoteUrl: '', embeddedPort: 8080, tokenCipher: null, tokenHub: null });

/** What the renderer may send to saveSettings(). */
export interface SettingsInput {
  mode: HubMode;
  remoteUrl: string;
  embeddedPort: number;
  /** undefined keeps the stored token, '' removes it. */
  adminToken?: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** An http(s) hub URL without credentials, query or fragment, trailing slash removed; else null. */
export function normaliseHubUrl(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  // Credentials in the URL would end up in logs and history: the token has its own field.
  if (u.username || u.password || u.search || u.hash) return null;
  return (u.origin + u.pathname).replace(/\/+$/, '');
}

function validPort(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 65535;
}

/** The settings file as found on disk: anything unreadable falls back to defaults, with notes why. */
export function parseSettingsFile(text: string | null): { settings: StoredSettings; problems: string[] } {
  if (text === null) return { settings: { ...DEFAULT_SETTINGS }, problems: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { settings: { ...DEFAULT_SETTINGS }, problems: ['settings file is not JSON; using defaults'] };
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { settings: { ...DEFAULT_SETTINGS }, problems: ['settings file is not an object; using defaults'] };
  const r = raw as Record<string, unknown>;
  const problems: string[] = [];
  const s: StoredSettings = { ...DEFAULT_SETTINGS };
  if (r.mode === 'embedded' || r.mode === 'remote') s.mode = r.mode;
  else if (r.mode !== undefined) problems.push(`unknown mode ${JSON.stringify(r.mode)}`);
  if (typeof r.remoteUrl === 'string' && r.remoteUrl !== '') {
    const url = normaliseHubUrl(r.remoteUrl);
    if (url) s.remoteUrl = url;
    else problems.push('remoteUrl is not an http(s) URL');
  }
  if (validPort(r.embeddedPort)) s.embeddedPort = r.embeddedPort;
  else if (r.embeddedPort !== undefined) problems.push('embeddedPort is not a port number');
  if (typeof r.tokenCipher === 'string' && /^[A-Za-z0-9+/=]+$/.test(r.tokenCipher)) s.tokenCipher = r.tokenCipher;
  if (s.tokenCipher !== null) {
    // Files written before tokenHub existed: the token was entered with the URL saved beside it.
    const hub = typeof r.tokenHub === 'string' ? normaliseHubUrl(r.tokenHub) : r.tokenHub === undefined && s.remoteUrl ? s.remoteUrl : null;
    if (hub) s.tokenHub = hub;
    else {
      problems.push('the stored token names no hub URL; it is dropped (enter it again in the settings)');
      s.tokenCipher = null;
    }
  }
  // A remote mode without a usable URL cannot connect: say so and run the local hub instead.
  if (s.mode === 'remote' && !s.remoteUrl) {
    problems.push('remote mode without a valid remoteUrl; using the embedded hub');
    s.mode = 'embedded';
  }
  return { settings: s, problems };
}

export function serialiseSettings(s: StoredSettings): string {
  const out: StoredSettings = { mode: s.mode, remoteUrl: s.remoteUrl, embeddedPort: s.embeddedPort, tokenCipher: s.tokenCipher, tokenHub: s.tokenHub };
  return JSON.stringify(out, null, 2) + '\n';
}

/** Input from the renderer is untrusted: check every field, return one error per problem. */
export function validateSettingsInput(input: unknown): Checked<SettingsInput> {
  if (!input || typeof input !== 'object') return { ok: false, errors: ['settings must be an object'] };
  const r = input as Record<string, unknown>;
  const errors: string[] = [];
  if (r.mode !== 'embedded' && r.mode !== 'remote') errors.push('mode must be "embedded" or "remote"');
  const remoteRaw = typeof r.remoteUrl === 'string' ? r.remoteUrl : '';
  const remoteUrl = remoteRaw.trim() === '' ? '' : normaliseHubUrl(remoteRaw);
  if (remoteUrl === null) errors.push('hub URL must be http:// or https:// without credentials, query or fragment');
  if (r.mode === 'remote' && remoteUrl === '') errors.push('remote mode needs a hub URL');
  if (!validPort(r.embeddedPort)) errors.push('port must be an integer from 0 to 65535');
  if (r.adminToken !== undefined && (typeof r.adminToken !== 'string' || r.adminToken.length > 4096 || /\s/.test(r.adminToken))) errors.push('token must be a string without spaces');
  if (errors.length) return { ok: false, errors };
  return { ok: true, value: { mode: r.mode as HubMode, remoteUrl: remoteUrl ?? '', embeddedPort: r.embeddedPort as number, adminToken: r.adminToken as string | undefined } };
}

/**
 * The new stored settings after a validated save; `seal` encrypts, or returns null when it cannot.
 * A new token is bound to the hub URL saved with it; a kept one stays bound to its own hub, so
 * pointing the app at another URL does not hand that hub the token.
 */
export function applySettingsInput(cur: StoredSettings, input: SettingsInput, seal: (token: string) => string | null): Checked<StoredSettings> {
  let tokenCipher = cur.tokenCipher;
  let tokenHub = cur.tokenHub;
  if (input.adminToken === '') {
    tokenCipher = null;
    tokenHub = null;
  } else if (input.adminToken !== undefined) {
    if (!input.remoteUrl) return { ok: false, errors: ['a token is stored for a hub URL: enter the hub URL it is for'] };
    tokenCipher = seal(input.adminToken);
    // Never fall back to plaintext on disk.
    if (tokenCipher === null) return { ok: false, errors: ['OS encryption is unavailable: the token cannot be stored; enter it in the console instead'] };
    tokenHub = input.remoteUrl;
  }
  return { ok: true, value: { mode: input.mode, remoteUrl: input.remoteUrl, embeddedPort: input.embeddedPort, tokenCipher, tokenHub } };
}

/** The stored token's ciphertext when it was entered for this hub URL, else null. */
export function tokenCipherFor(s: StoredSettings, hubUrl: string): string | null {
  return s.tokenCipher !== null && s.tokenHub === hubUrl ? s.tokenCipher : null;
}

/** What the renderer may see of the settings: never the token or its ciphertext, only which hub it is for. */
export function settingsView(s: StoredSettings, encryptionAvailable: boolean) {
  return { mode: s.mode, remoteUrl: s.remoteUrl, embeddedPort: s.embeddedPort, hasToken: s.tokenCipher !== null, tokenHub: s.tokenCipher !== null ? s.tokenHub : null, encryptionAvailable };
}
