// A fresh Chrome for one CDP client: its own profile directory, driven over
// --remote-debugging-pipe (no debugging port opens on the worker, so nothing else on the machine
// can reach it), behind the lane's egress proxy like a job's Chrome. Killed with its helpers and
// its profile removed when the client leaves: nothing of it remains for the next one.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { CDP_MAX_FRAME_BYTES } from 'paprika/wire';
import { CDP_CHROME_ARGS, proxyArgs } from '../chrome/chrome-process.ts';
import { makeProfile } from '../chrome/stale-profiles.ts';

export interface CdpBrowserOptions {
  chromePath: string;
  /** The lane's egress proxy (every request of the client's pages goes through it). */
  proxyPort?: number;
}


function downloadDirOf(profile: string): string {
  return path.join(profile, 'Downloads');
}

export class CdpBrowser {
  private readonly proc: ChildProcess;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private exited = false;
  /** Resolves when the Chrome process is gone, with why. */
  readonly gone: Promise<string>;

  private constructor(
    proc: ChildProcess,
    readonly userDataDir: string,
    onMessage: (text: string) => void,
  ) {
    this.proc = proc;
    this.gone = new Promise((resolve) => {
      proc.once('exit', (code, signal) => {
        this.exited = true;
        resolve(signal ? `browser exited (${signal})` : `browser exited (code ${code})`);
      });
      proc.once('error', (err) => {
        this.exited = true;
        resolve(`browser did not start: ${err.message}`);
      });
    });
    const out = proc.stdio[4] as Readable;
    out.on('data', (chunk: Buffer) => this.read(chunk, onMessage));
    out.on('error', () => this.kill());
    (proc.stdio[3] as Writable).on('error', () => this.kill());
  }

  /** Where this client's downloads go: inside its profile, removed with it. */
  get downloadDir(): string {
    return downloadDirOf(this.userDataDir);
  }

  static async launch(o: CdpBrowserOptions, onMessage: (text: string) => void): Promise<CdpBrowser> {
    const dir = await makeProfile('paprika-cdp-');
    // A download the page starts by itself (no Browser.setDownloadBehavior) lands in the profile too.
    await fs.mkdir(path.join(dir, 'Default'), { recursive: true });
    await fs.writeFile(path.join(dir, 'Default', 'Preferences'), JSON.stringify({ download: { default_directory: downloadDirOf(dir), prompt_for_download: false }, savefile: { default_directory: downloadDirOf(dir) } }));
    const args = [...CDP_CHROME_ARGS, '--headless', '--remote-debugging-pipe', `--user-data-dir=${dir}`, ...(o.proxyPort ? proxyArgs(o.proxyPort) : []), 'about:blank'];
    // detached: Chrome leads its own process group, so one kill reaches its helpers too.
    const proc = spawn(o.chromePath, args, { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    return new CdpBrowser(proc, dir, onMessage);
  }

  /** Chrome separates messages on the pipe with NUL bytes. */
  private read(chunk: Buffer, onMessage: (text: string) => void): void {
    let start = 0;
    for (let i = chunk.indexOf(0); i >= 0; i = chunk.indexOf(0, start)) {
      this.buffered.push(chunk.subarray(start, i));
      onMessage(Buffer.concat(this.buffered).toString('utf8'));
      this.buffered = [];
      this.bufferedBytes = 0;
      start = i + 1;
    }
    if (start < chunk.length) {
      this.buffered.push(chunk.subarray(start));
      this.bufferedBytes += chunk.length - start;
      if (this.bufferedBytes > CDP_MAX_FRAME_BYTES) this.kill();
    }
  }

  send(text: string): void {
    if (this.exited) return;
    const pipe = this.proc.stdio[3] as Writable;
    pipe.write(text);
    pipe.write('\0');
  }

  /** SIGKILL the browser and its process group: after a Browser.close its helpers may outlive it. */
  kill(): void {
    const pid = this.proc.pid;
    if (pid === undefined) return;
    try {
      if (process.platform === 'win32') this.proc.kill('SIGKILL');
      else process.kill(-pid, 'SIGKILL');
    } catch {
      if (!this.exited) this.proc.kill('SIGKILL');
    }
  }

  /** Kill (if still running), wait for the exit, remove the profile. */
  async end(): Promise<void> {
    this.kill();
    await this.gone;
    await fs.rm(this.userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => {});
  }
}
