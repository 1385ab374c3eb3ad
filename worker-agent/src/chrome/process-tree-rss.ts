// Memory of a browser and its helpers (renderers, GPU, utility, zygotes): the RSS of every
// process under its pid, from /proc. Shared pages count once per process, so this overstates
// what the tree really holds; as a recycling threshold that errs on the safe side.
import fs from 'node:fs/promises';

/** Linux pages; other page sizes exist (arm64 64 KiB kernels) but the threshold is coarse. */
const PAGE_BYTES = 4096;

/** Sum of RSS (bytes) of `rootPid` and its descendants; undefined where /proc is missing (not Linux). */
export async function processTreeRssBytes(rootPid: number): Promise<number | undefined> {
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
  let pages = 0;
  const todo = [rootPid];
  const seen = new Set<number>();
  while (todo.length > 0) {
    const pid = todo.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    pages += procs.get(pid)?.rss ?? 0;
    todo.push(...(children.get(pid) ?? []));
  }
  return pages * PAGE_BYTES;
}
