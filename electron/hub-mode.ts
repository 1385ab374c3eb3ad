// Which hub the window talks to: the embedded one (local demo) or a remote one. Command-line
// flags beat the settings file so an operator can point a packaged app elsewhere for a session.
import { normaliseHubUrl, type StoredSettings } from './settings.ts';

export type HubTarget = { kind: 'embedded'; port: number } | { kind: 'remote'; url: string };

export interface ModeChoice {
  target: HubTarget;
  /** Why a request was not followed, for the log. */
  notes: string[];
}

function flagValue(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === name) return argv[i + 1];
    if (argv[i].startsWith(name + '=')) return argv[i].slice(name.length + 1);
  }
  return undefined;
}

export function chooseHubTarget(settings: StoredSettings, argv: readonly string[]): ModeChoice {
  const notes: string[] = [];
  if (argv.includes('--embedded')) return { target: { kind: 'embedded', port: settings.embeddedPort }, notes };
  const flag = flagValue(argv, '--hub');
  if (flag !== undefined) {
    const url = normaliseHubUrl(flag);
    if (url) return { target: { kind: 'remote', url }, notes };
    notes.push(`--hub ${JSON.stringify(flag)} is not an http(s) URL; ignored`);
  }
  if (settings.mode === 'remote' && settings.remoteUrl) return { target: { kind: 'remote', url: settings.remoteUrl }, notes };
  return { target: { kind: 'embedded', port: settings.embeddedPort }, notes };
}

/** Environment for the embedded hub: ours win over inherited PAPRIKA_* for port and data dir. */
export function embeddedHubEnv(base: Record<string, string | undefined>, port: number, dataDir: string): Record<string, string | undefined> {
  return { ...base, PAPRIKA_PORT: String(port), PAPRIKA_DATA_DIR: dataDir, PAPRIKA_BIND: '127.0.0.1' };
}
