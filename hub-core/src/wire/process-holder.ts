// "Which process holds this?", written into a lock or a directory it owns, and whether that
// process still runs. A pid alone is not enough after a kill: the pid may belong to another
// process by the time anyone looks, so on Linux the kernel's start time of the pid is kept too.
import fs from 'node:fs';
import os from 'node:os';

export interface ProcessHolder {
  host: string;
  pid: number;
  /** /proc/<pid>/stat field 22 (clock ticks after boot), where /proc exists. */
  start?: string;
  /** When it took hold (ISO text), for messages. */
  since: string;
}

function startTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

export function thisProcess(): ProcessHolder {
  return { host: os.hostname(), pid: process.pid, start: startTime(process.pid), since: new Date().toISOString() };
}

/** Runs still, or cannot be told (another host: assumed to run). */
export function holderAlive(holder: Pick<ProcessHolder, 'host' | 'pid' | 'start'>): boolean {
  if (holder.host !== os.hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  // The pid runs; on Linux, is it still the process that took hold?
  const now = startTime(holder.pid);
  return !(holder.start && now && now !== holder.start);
}

/** The holder written in `file`: 'gone' when there is no file, undefined when it cannot be read as one. */
export function readHolder(file: string): ProcessHolder | undefined | 'gone' {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw err;
  }
  try {
    const h = JSON.parse(text) as ProcessHolder;
    return typeof h.host === 'string' && Number.isInteger(h.pid) ? h : undefined;
  } catch {
    return undefined; // half-written by a holder killed mid-write, or not ours
  }
}
