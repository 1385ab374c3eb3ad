// Connection store: the hub's config and the state of the link to it (see model/connection-state.ts).
import { createStore } from 'zustand/vanilla';
import type { AdminConfig } from '../api/types.ts';
import { initialLink, linkFailed, linkOk, socketChanged, type LinkState, type SocketState } from '../model/connection-state.ts';

export interface ConnectionState {
  hubUrl: string;
  config: AdminConfig | null;
  link: LinkState;
  setHubUrl(url: string): void;
  setConfig(cfg: AdminConfig): void;
  ok(now: number, hubStale?: boolean): void;
  failed(now: number, error: string, unauthorized?: boolean): void;
  socket(state: SocketState, now: number): void;
}

export const connectionStore = createStore<ConnectionState>()((set) => ({
  hubUrl: '',
  config: null,
  link: initialLink,
  setHubUrl: (hubUrl) => set({ hubUrl }),
  setConfig: (config) => set({ config }),
  ok: (now, hubStale) => set((s) => ({ link: linkOk(s.link, now, hubStale) })),
  failed: (now, error, unauthorized) => set((s) => ({ link: linkFailed(s.link, now, error, unauthorized) })),
  socket: (state, now) => set((s) => ({ link: socketChanged(s.link, state, now) })),
}));
