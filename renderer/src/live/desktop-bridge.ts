// The desktop app's preload API (electron/preload.ts), when the console runs inside it.
// In a plain browser `window.paprika` is absent and the console talks to its own origin.

export interface DesktopSettingsView {
  mode: 'embedded' | 'remote';
  remoteUrl: string;
  embeddedPort: number;
  hasToken: boolean;
  /** The hub URL the stored token was entered for: it is sent to that hub only. */
  tokenHub: string | null;
  encryptionAvailable: boolean;
}

export interface DesktopSettingsInput {
  mode: 'embedded' | 'remote';
  remoteUrl: string;
  embeddedPort: number;
  /** undefined keeps the stored token, '' removes it. */
  adminToken?: string;
}

export interface DesktopBridge {
  getHubUrl(): Promise<string>;
  getSettings(): Promise<DesktopSettingsView>;
  saveSettings(s: DesktopSettingsInput): Promise<{ ok: boolean; errors: string[] }>;
  openExternal(url: string): Promise<boolean>;
}

export function desktopBridge(): DesktopBridge | null {
  const w = globalThis as unknown as { paprika?: DesktopBridge };
  return w.paprika ?? null;
}
