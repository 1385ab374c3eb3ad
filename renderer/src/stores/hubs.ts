// Hubs store: the registry as last received (live hubs and recently dead ones).
import { createStore } from 'zustand/vanilla';
import type { HubInfo } from '../api/types.ts';

export interface HubsState {
  hubs: HubInfo[];
  setHubs(hubs: HubInfo[]): void;
}

export const hubsStore = createStore<HubsState>()((set) => ({
  hubs: [],
  setHubs: (hubs) => set({ hubs: [...hubs].sort((a, b) => Number(b.alive) - Number(a.alive) || a.hub_id.localeCompare(b.hub_id)) }),
}));
