// The desktop shell: settings, an embedded or remote hub, one locked-down window. Decisions
// live in plain modules (settings, hub-mode, navigation-policy, csp); this file only acts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, ipcMain, safeStorage, shell } from 'electron';
import { installConsoleSession, registerConsoleScheme, type HubLink } from './console-session.ts';
import { chooseHubTarget, embeddedHubEnv, type HubTarget } from './hub-mode.ts';
import { IPC } from './ipc-channels.ts';
import { canOpenExternally, CONSOLE_START_URL, isConsoleUrl } from './navigation-policy.ts';
import { applySettingsInput, parseSettingsFile, serialiseSettings, settingsView, tokenCipherFor, validateSettingsInput, type StoredSettings } from './settings.ts';
import { canSeal, openToken, sealToken } from './token-vault.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
// electron-dist/electron/main.js → the app root holds renderer/dist.
const appRoot = app.isPackaged ? app.getAppPath() : path.resolve(here, '../..');
const consoleDir = path.join(appRoot, 'renderer', 'dist');
const settingsFile = () => path.join(app.getPath('userData'), 'settings.json');

let settings: StoredSettings;
let link: HubLink | null = null;
let embedded: { url: string; stop(): Promise<void> } | null = null;
let win: BrowserWindow | null = null;

registerConsoleScheme();
app.enableSandbox();

async function loadSettings(): Promise<StoredSettings> {
  const text = await fs.readFile(settingsFile(), 'utf8').catch(() => null);
  const { settings: s, problems } = parseSettingsFile(text);
  for (const p of problems) console.warn(`[paprika] settings: ${p}`);
  return s;
}

async function saveSettingsFile(s: StoredSettings): Promise<void> {
  await fs.mkdir(path.dirname(settingsFile()), { recursive: true });
  // Write then rename: a crash mid-write must not leave a half file behind.
  const tmp = settingsFile() + '.tmp';
  await fs.writeFile(tmp, serialiseSettings(s), { mode: 0o600 });
  await fs.rename(tmp, settingsFile());
}

async function connect(target: HubTarget): Promise<HubLink> {
  if (target.kind === 'remote') {
    const cipher = tokenCipherFor(settings, target.url);
    if (cipher === null && settings.tokenHub) console.warn(`[paprika] the stored admin token is for ${settings.tokenHub}, not ${target.url}: not sent (the console asks for this hub's)`);
    return { url: target.url, token: openToken(safeStorage, cipher) };
  }
  // Imported only when needed, so a remote-only session never loads the hub and its drivers.
  const { startHub } = await import('../hub-core/src/app/hub.ts');
  const dataDir = path.join(app.getPath('userData'), 'hub-data');
  embedded = await startHub({ env: embeddedHubEnv(process.env, target.port, dataDir), consoleDir });
  return { url: embedded.url, token: null };
}

async function disconnect(): Promise<void> {
  link = null;
  const hub = embedded;
  embedded = null;
  await hub?.stop();
}

function createWindow(): BrowserWindow {
  const w = new BrowserWindow({
    width: 1480,
    height: 900,
    title: 'Paprika console',
    backgroundColor: '#f4f6f8',
    webPreferences: {
      preload: path.join(here, 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  w.webContents.on('will-navigate', (e, url) => {
    if (!isConsoleUrl(url)) e.preventDefault();
  });
  w.webContents.on('will-redirect', (e, url) => {
    if (!isConsoleUrl(url)) e.preventDefault();
  });
  w.webContents.on('will-attach-webview', (e) => e.preventDefault());
  // No new windows, ever; http(s) links (lane live views) go to the system browser.
  w.webContents.setWindowOpenHandler(({ url }) => {
    if (canOpenExternally(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  void w.loadURL(CONSOLE_START_URL);
  return w;
}

function registerIpc(): void {
  ipcMain.handle(IPC.getHubUrl, () => link?.url ?? '');
  ipcMain.handle(IPC.getSettings, () => settingsView(settings, canSeal(safeStorage)));
  ipcMain.handle(IPC.openExternal, async (_e, url: unknown) => {
    if (typeof url !== 'string' || !canOpenExternally(url)) return false;
    await shell.openExternal(url);
    return true;
  });
  ipcMain.handle(IPC.saveSettings, async (_e, input: unknown) => {
    const checked = validateSettingsInput(input);
    if (!checked.ok) return { ok: false, errors: checked.errors };
    const next = applySettingsInput(settings, checked.value, (t) => sealToken(safeStorage, t));
    if (!next.ok) return { ok: false, errors: next.errors };
    settings = next.value;
    await saveSettingsFile(settings);
    await reconnect();
    return { ok: true, errors: [] };
  });
}

/** Start the embedded hub or reach the remote one, as the settings and flags choose. */
async function connectChosenHub(): Promise<void> {
  const { target, notes } = chooseHubTarget(settings, process.argv);
  for (const n of notes) console.warn(`[paprika] ${n}`);
  try {
    link = await connect(target);
  } catch (err) {
    console.error('[paprika] could not start the hub:', err);
  }
}

async function reconnect(): Promise<void> {
  await disconnect();
  await connectChosenHub();
  win?.webContents.reload();
}

app.on('web-contents-created', (_e, contents) => {
  contents.on('will-attach-webview', (e) => e.preventDefault());
});

app.whenReady().then(async () => {
  settings = await loadSettings();
  installConsoleSession(consoleDir, () => link);
  registerIpc();
  await connectChosenHub();
  win = createWindow();
  win.on('closed', () => (win = null));
});

let quitting = false;
app.on('before-quit', (e) => {
  if (quitting || !embedded) return;
  // Let the embedded hub stop gracefully (links closed, registry left) before exit.
  e.preventDefault();
  quitting = true;
  void disconnect().finally(() => app.quit());
});

app.on('window-all-closed', () => app.quit());
