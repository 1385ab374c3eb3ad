// The host figures a heartbeat carries: CPU % since the last sample, memory %, disk % of the
// filesystem the agent writes to (user-data dirs, screenshots).
import fs from 'node:fs/promises';
import os from 'node:os';

export interface HostSample {
  cpuPct: number;
  memPct: number;
  diskPct: number;
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const clampPct = (n: number) => Math.min(100, Math.max(0, round1(n)));

export class HostStats {
  private last = cpuTimes();
  private disk: { pct: number; at: number } | undefined;

  private warned = false;

  constructor(
    private readonly diskPath: string,
    private readonly onUnreadable?: (message: string) => void,
  ) {}

  async diskPct(): Promise<number> {
    let pct = 0;
    try {
      const s = await fs.statfs(this.diskPath);
      const used = s.blocks - s.bfree;
      // As df computes it: used / (used + available to unprivileged users).
      pct = clampPct((used / (used + s.bavail)) * 100);
    } catch (err) {
      // Unreadable: reported as 0 % (the worker keeps taking work), and said once.
      if (!this.warned) this.onUnreadable?.(`disk usage of ${this.diskPath} unreadable (${String(err)}); reporting 0 %`);
      this.warned = true;
      pct = 0;
    }
    this.disk = { pct, at: Date.now() };
    return pct;
  }

  /** The disk figure at most `maxAgeMs` old: the assignment path checks it for every job. */
  async recentDiskPct(maxAgeMs = 1000): Promise<number> {
    if (this.disk && Date.now() - this.disk.at <= maxAgeMs) return this.disk.pct;
    return this.diskPct();
  }

  async sample(): Promise<HostSample> {
    const now = cpuTimes();
    const busy = now.busy - this.last.busy;
    const total = now.total - this.last.total;
    this.last = now;
    return {
      cpuPct: clampPct(total > 0 ? (busy / total) * 100 : 0),
      memPct: clampPct((1 - os.freemem() / os.totalmem()) * 100),
      diskPct: await this.diskPct(),
    };
  }
}

function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times;
    const sum = t.user + t.nice + t.sys + t.idle + t.irq;
    total += sum;
    busy += sum - t.idle;
  }
  return { busy, total };
}
