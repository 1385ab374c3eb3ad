// Queue store: the hub's answer to "why is it waiting?" while a view shows it.
import { createStore } from 'zustand/vanilla';
import type { QueueResponse } from '../api/types.ts';

export interface QueueState {
  queue: QueueResponse | null;
  error: string | null;
  setQueue(queue: QueueResponse): void;
  setError(error: string | null): void;
}

export const queueStore = createStore<QueueState>()((set) => ({
  queue: null,
  error: null,
  setQueue: (queue) => set({ queue, error: null }),
  setError: (error) => set({ error }),
}));
