// One Chrome process with a profile of its own: launch it, learn why it went away, end it.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { makeProfile } from './stale-profiles.ts';

/**
 * WebRTC may not send UDP around the egress proxy (which carries TCP only): no STUN, no UDP
 * candidates; TURN over TCP goes through the proxy and its rules. This Chrome reads the switch
 * `--webrtc-ip-handling-policy`; the `--force-` spelling the lanes had before is ignored, and
 * a job's page sent STUN to any address and read the answer, past every egress rule. On every
 * browser, shared ones too (their proxy is set per context, so they get no proxy flags).
 */
const WEBRTC_PROXIED_ONLY = '--webrtc-ip-handling-policy=disable_non_proxied_udp';

/** The seed's lane flags (dev-shm because containers give /dev/shm 64 MB and tabs crash on it), and WebRTC kept to the proxy. */
export const CHROME_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage', WEBRTC_PROXIED_ONLY] as const;

/**
 * Browser UI that a headless Chrome still builds for every new window and never shows: since
 * Chrome 14x the omnibox popup is a WebUI page, made in a renderer of its own for each window,
 * and each new browser context's first page opens a window. With a context per job that was a
 * second renderer started and thrown away every job (bench: half of the renderers, CPU a job
 * 1,600 → 700 ms). Unknown feature names are ignored, so older Chromes take the flag too.
 */
const UNSHOWN_UI_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup'];

/**
 * No first tab: a lane's jobs run in contexts of their own, so the `about:blank` tab a browser
 * opens at start-up only held a renderer for the browser's whole life (~18 MiB of PSS a
 * browser, one renderer a lane's Chrome). Launch with `waitForInitialPage: false` with it.
 */
const NO_START_TAB = ['--no-startup-window'] as const;

/**
 * The network service and the GPU thread inside the browser process, not in two processes of
 * their own: 170 -> 152 MiB of PSS a browser (four lane browsers with a context and a page
 * each; per-job time the same). A crash of either now ends the browser, which a lane recovers
 * from as from any browser crash; with --no-sandbox they gave no sandbox either.
 */
const FEWER_PROCESSES = ['--in-process-gpu', '--enable-features=NetworkServiceInProcess2'] as const;

/**
 * A lane's browser: the seed's flags, no first tab, no unshown UI, no spare renderer, and two
 * processes fewer. After a navigation Chrome starts a renderer ahead of time for the next
 * navigation *in the same browser context*; every job's context closes when the job ends, so that
 * one too was started and thrown away once a job. (Puppeteer merges this `--disable-features`
 * and `--enable-features` with its own lists.)
 */
export const LANE_CHROME_ARGS = [...CHROME_ARGS, `--disable-features=${[...UNSHOWN_UI_FEATURES, 'SpareRendererForSitePerProcess'].join(',')}`, ...NO_START_TAB, ...FEWER_PROCESSES] as const;

/** A CDP client's browser: its client may navigate one context many times, so the spare renderer stays. */
export const CDP_CHROME_ARGS = [...CHROME_ARGS, `--disable-features=${UNSHOWN_UI_FEATURES.join(',')}`] as const;

export interface RunningChrome {
  readonly browser: Browser;
  readonly pid: number | undefined;
  readonly userDataDir: string;
  /** Resolves once, with the reason, when the browser is gone (exit, kill, lost connection). Never rejects. */
  readonly gone: Promise<string>;
  /** Set before a deliberate kill so `gone` reports why (e.g. hung) rather than just "SIGKILL". */
  killedBecause?: string;
}

/**
 * Every request through the lane's egress proxy, loopback included (Chrome bypasses proxies for
 * loopback unless told `<-loopback>`); WebRTC's UDP is off in CHROME_ARGS.
 */
export function proxyArgs(proxyPort: number): string[] {
  return [`--proxy-server=http://127.0.0.1:${proxyPort}`, '--proxy-bypass-list=<-loopback>'];
}

export async function launchChrome(executablePath: string, o: { launchTimeoutMs?: number; proxyPort?: number } = {}): Promise<RunningChrome> {
  const userDataDir = await makeProfile('paprika-lane-');
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath,
      headless: true,
      args: [...LANE_CHROME_ARGS, ...(o.proxyPort ? proxyArgs(o.proxyPort) : [])],
      userDataDir,
      timeout: o.launchTimeoutMs ?? 30_000,
      // LANE_CHROME_ARGS open no first tab, so there is none to wait for.
      waitForInitialPage: false,
      // Over a pipe Chrome exits with the agent, even on a hard crash: no orphan browsers on a worker.
      // (Windows keeps the WebSocket transport, which every Chrome build supports there.)
      pipe: process.platform !== 'win32',
      // Each CDP call is bounded by the lane's own watchdog and the job deadline instead: a long
      // `wait_for` (up to 600 s) must not trip puppeteer's 180 s default.
      protocolTimeout: 0,
      // The agent owns shutdown (finish running jobs first); puppeteer must not close lanes on a signal.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (err) {
    await removeProfile(userDataDir);
    throw err;
  }
  const proc = browser.process();
  let exit: string | undefined;
  proc?.once('exit', (code, signal) => (exit = signal ? `browser process exited (${signal})` : `browser process exited (code ${code})`));
  const chrome: RunningChrome = {
    browser,
    pid: proc?.pid,
    userDataDir,
    gone: new Promise<string>((resolve) => {
      browser.once('disconnected', () => {
        // The pipe can close a moment before Node reports the exit: wait briefly for the exit's reason.
        const settle = exit ? Promise.resolve() : new Promise((r) => setTimeout(r, 300));
        void settle.then(() => resolve(chrome.killedBecause ?? exit ?? 'lost the connection to the browser'));
      });
    }),
  };
  return chrome;
}

/** SIGKILL the browser and its helpers (renderers, GPU, zygote share its process group on POSIX). */
export function killChromeNow(chrome: RunningChrome, because?: string): void {
  if (because && !chrome.killedBecause) chrome.killedBecause = because;
  const pid = chrome.pid;
  if (pid === undefined) return;
  try {
    if (process.platform === 'win32') process.kill(pid, 'SIGKILL');
    else process.kill(-pid, 'SIGKILL'); // puppeteer starts Chrome detached: its pid leads the group
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Close politely within graceMs, then kill; always removes the profile. */
export async function endChrome(chrome: RunningChrome, graceMs = 5000): Promise<void> {
  if (chrome.browser.connected) {
    let timer: NodeJS.Timeout | undefined;
    const closed = chrome.browser.close().then(
      () => true,
      () => false,
    );
    const inTime = await Promise.race([closed, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs)))]);
    clearTimeout(timer);
    if (!inTime) killChromeNow(chrome, 'did not close in time');
  }
  killChromeNow(chrome); // helpers of a crashed browser can outlive it; the group kill reaps them
  await Promise.race([chrome.gone, new Promise((r) => setTimeout(r, graceMs))]);
  await removeProfile(chrome.userDataDir);
}

async function removeProfile(dir: string): Promise<void> {
  // Chrome's helpers may still hold files for a moment after the kill.
  await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => {});
}
