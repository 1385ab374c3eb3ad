// Connection store: the hub's config, the state of the link to it (see model/connection-state.ts),
// and whether /jobs needs an API token the console does not have (model/hub-tokens.ts).
import { createStore } from 'zustand/vanilla';
import type { AdminConfig } from '../api/types.ts';
import { initialLink, linkFailed, linkOk, socketChanged, type LinkState, type SocketState } from '../model/connection-state.ts';
import { apiAuthAfter401, type ApiAuth } from '../model/hub-tokens.ts';

export interface ConnectionState {
  hubUrl: string;
  config: AdminConfig | null;
  link: LinkState;
  apiAuth: ApiAuth;
  apiAuthError: string | null;
  setHubUrl(url: string): void;
  setConfig(cfg: AdminConfig): void;
  ok(now: number, hubStale?: boolean): void;
  failed(now: number, error: string, unauthorized?: boolean): void;
  socket(state: SocketState, now: number): void;
  apiRefused(error: string, byOperator: boolean): void;
  apiAccepted(): void;
  setApiAuth(apiAuth: ApiAuth): void;
}

export const connectionStore = createStore<ConnectionState>()((set) => ({
  hubUrl: '',
  config: null,
  link: initialLink,
  apiAuth: 'ok',
  apiAuthError: null,
  setHubUrl: (hubUrl) => set({ hubUrl }),
  setConfig: (config) => set({ config }),
  ok: (now, hubStale) => set((s) => ({ link: linkOk(s.link, now, hubStale) })),
  failed: (now, error, unauthorized) => set((s) => ({ link: linkFailed(s.link, now, error, unauthorized) })),
  socket: (state, now) => set((s) => ({ link: socketChanged(s.link, state, now) })),
  apiRefused: (error, byOperator) => set((s) => ({ apiAuth: apiAuthAfter401(s.apiAuth, byOperator), apiAuthError: error })),
  // Every jobs poll lands here: leave the state untouched (no notification) when nothing changes.
  apiAccepted: () => set((s) => (s.apiAuth === 'ok' && s.apiAuthError === null ? s : { apiAuth: 'ok', apiAuthError: null })),
  setApiAuth: (apiAuth) => set({ apiAuth }),
}));
