// Which of the hub's bearer tokens a call needs, which one the console sends, and which one it
// asks for. The hub guards /jobs and /sessions with PAPRIKA_API_TOKEN and /admin/* with
// PAPRIKA_ADMIN_TOKEN (hub-core/src/http/auth.ts); an operator may set them apart or alike.

export type TokenScope = 'admin' | 'api';

/** localStorage keys; the admin one predates the API token and is kept as it was. */
export const TOKEN_KEYS: Readonly<Record<TokenScope, string>> = { admin: 'paprika.adminToken', api: 'paprika.apiToken' };

/**
 * Where a token typed into the console is kept. In a browser the console's origin is its hub,
 * so the plain key is that hub's. The desktop app's origin (app://console) is the same for every
 * hub it is pointed at: there the key names the hub, so a token never follows a switch to another.
 */
export function tokenKey(scope: TokenScope, desktopHubUrl: string): string {
  return desktopHubUrl ? `${TOKEN_KEYS[scope]}@${desktopHubUrl}` : TOKEN_KEYS[scope];
}

export function tokenScopeFor(path: string): TokenScope {
  return /^\/(jobs|sessions)(?=[/?]|$)/.test(path) ? 'api' : 'admin';
}

/** With no API token kept, /jobs gets the admin token: when both are the same value, one question is enough. */
export function tokenToSend(scope: TokenScope, kept: Readonly<Record<TokenScope, string | null>>): string | null {
  return scope === 'api' ? (kept.api ?? kept.admin) : kept.admin;
}

/** 'asking': /jobs refused the token sent; 'dismissed': the operator put the question off. */
export type ApiAuth = 'ok' | 'asking' | 'dismissed';

/** A put-off question is not asked again by a background poll, only when the operator opens or cancels a job. */
export function apiAuthAfter401(cur: ApiAuth, byOperator: boolean): ApiAuth {
  return cur === 'dismissed' && !byOperator ? 'dismissed' : 'asking';
}

/** One prompt at a time, the admin token first: /jobs falls back to it, which may settle the API question. */
export function tokenToAsk(adminRequired: boolean, apiAuth: ApiAuth): TokenScope | null {
  if (adminRequired) return 'admin';
  return apiAuth === 'asking' ? 'api' : null;
}
