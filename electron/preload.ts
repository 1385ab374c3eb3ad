// The renderer's only door to the desktop app: four named calls, no Node, no raw ipcRenderer.
// Bundled to CommonJS (preload.cjs) because sandboxed preloads cannot be ES modules.
import { contextBridge, ipcRenderer } from 'electron';
import { IPC } from './ipc-channels.ts';

contextBridge.exposeInMainWorld('paprika', {
  getHubUrl: (): Promise<string> => ipcRenderer.invoke(IPC.getHubUrl),
  getSettings: (): Promise<unknown> => ipcRenderer.invoke(IPC.getSettings),
  saveSettings: (s: unknown): Promise<{ ok: boolean; errors: string[] }> => ipcRenderer.invoke(IPC.saveSettings, s),
  openExternal: (url: string): Promise<boolean> => ipcRenderer.invoke(IPC.openExternal, String(url)),
});
