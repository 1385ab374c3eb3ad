// Memory of a browser and its helpers (renderers, GPU, utility, zygotes): the resident memory
// of every process under its pid, from /proc. Each process is counted by its PSS (smaps_rollup:
// a shared page split among the processes sharing it), because a plain RSS sum counts Chrome's
// shared libraries and memory once per process: a one-tab Chrome read 840 MiB that way. RSS is
// the fallback where smaps_rollup is missing (kernels before 4.14).
import fs from 'node:fs/promises';

/** Linux pages; other page sizes exist (arm64 64 KiB kernels) but the threshold is coarse. */
const PAGE_BYTES = 4096;

/** Sum of PSS (else RSS) in bytes of `rootPid` and its descendants; undefined where /proc is missing (not Linux). */
export async function processTreeMemoryBytes(rootPid: number): Promise<number | undefined> {
  let entries: string[];
  try {
    entries = await fs.readdir('/proc');
  } catch {
    return undefined;
  }
  const procs = new Map<number, { ppid: number; rss: number }>();
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (e) => {
        const stat = await fs.readFile(`/proc/${e}/stat`, 'utf8').catch(() => undefined);
        if (!stat) return; // exited meanwhile
        // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ')'.
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        procs.set(Number(e), { ppid: Number(rest[1]), rss: Number(rest[21]) });
      }),
  );
  if (!procs.has(rootPid)) return undefined;
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const tree: number[] = [];
  const todo = [rootPid];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    if (tree.includes(pid)) continue;
    tree.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  const sizes = await Promise.all(tree.map(async (pid) => (await pssBytes(pid)) ?? (procs.get(pid)?.rss ?? 0) * PAGE_BYTES));
  return sizes.reduce((a, b) => a + b, 0);
}

async function pssBytes(pid: number): Promise<number | undefined> {
  const text = await fs.readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => undefined);
  const kb = text && /^Pss:\s+(\d+) kB/m.exec(text);
  return kb ? Number(kb[1]) * 1024 : undefined;
}
