// A CDP client's browser on the worker (worker-agent/src/cdp/cdp-browser.ts), on real Chromium:
// driven over the pipe (no debugging port), and after Browser.close or end() nothing of it
// remains: no process of its group, no profile directory.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CdpBrowser } from '../../worker-agent/src/cdp/cdp-browser.ts';
import { waitFor } from '../harness/wait.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChrome = fs.existsSync(CHROMIUM);

/** Processes of the group still running (zombies excluded: killed, waiting for this sandbox's init to reap them). */
const groupRunning = (pgid: number) =>
  fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
    try {
      // stat: "pid (comm) state ppid pgrp …"; comm may hold spaces, so split after its ')'.
      const [state, , pgrp] = fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return Number(pgrp) === pgid && state !== 'Z';
    } catch {
      return false; // gone meanwhile
    }
  });

describe.skipIf((!hasChrome && process.env.CI !== 'true') || !fs.existsSync('/proc/self/stat'))('CdpBrowser', () => {
  it('answers CDP over its pipe, exits on Browser.close, and end() leaves no process or profile', async () => {
    const replies: Array<{ id: number; result?: { product?: string } }> = [];
    let got: (() => void) | undefined;
    const browser = await CdpBrowser.launch({ chromePath: CHROMIUM }, (text) => {
      replies.push(JSON.parse(text));
      got?.();
    });
    const pid = (browser as unknown as { proc: { pid: number } }).proc.pid;
    const reply = (id: number) => new Promise<void>((r) => (got = () => replies.some((x) => x.id === id) && r()));
    const version = reply(1);
    browser.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' }));
    await version;
    expect(replies.find((x) => x.id === 1)?.result?.product).toMatch(/Chrom/);
    expect(fs.existsSync(browser.userDataDir)).toBe(true);
    browser.send(JSON.stringify({ id: 2, method: 'Browser.close' }));
    expect(await browser.gone).toMatch(/browser exited/);
    await browser.end();
    expect(fs.existsSync(browser.userDataDir)).toBe(false);
    // end() sent the group SIGKILL: a helper killed an instant ago may still be in the kernel's
    // teardown (a loaded CI once saw two), so the test waits for their exit, bounded.
    await waitFor('every process of the group gone', async () => groupRunning(pid).length === 0, 5000, 20).catch(() => {});
    expect(groupRunning(pid)).toEqual([]);
  });
});
