// Worker ids come from the LAN IP so that a worker keeps its id (and so its hub, through
// nginx's hash) across restarts, self-updates and a lost id file. Random ids made the
// owning hub jump at every update and skewed the fleet (seed, layer 1).
import { isIPv4 } from 'node:net';

/** `10.10.50.150` → `w50150`; the long form `w10-10-50-150` serves when the short one is taken. */
export function shortWorkerId(ip: string): string {
  const o = octets(ip);
  return `w${o[2]}${o[3]}`;
}

export function longWorkerId(ip: string): string {
  return `w${octets(ip).join('-')}`;
}

/**
 * The ids an IP may take, in order of preference. Two addresses can want the same short id:
 * in different /16s (10.10.5.150 and 10.20.5.150 both make `w5150`), and even in one, as the
 * octets are joined without a separator (10.10.5.150 and 10.10.51.50): the second gets the long form.
 */
export function workerIdCandidates(ip: string): [string, string] {
  return [shortWorkerId(ip), longWorkerId(ip)];
}

/**
 * The rule every registry applies: the first candidate that is free or already held by the same
 * IP (same IP → same id). `holderOf(id)` tells which IP holds an id now (undefined: free); the
 * candidates are the IP's own (`workerIdCandidates`) unless the worker asked for an id. The
 * memory registry calls this; Redis runs the same rule atomically in lua/claimWorkerId.lua.
 */
export function workerIdFor(ip: string, holderOf: (id: string) => string | undefined, candidates: readonly string[] = workerIdCandidates(ip)): string {
  for (const id of candidates) {
    const holder = holderOf(id);
    if (holder === undefined || holder === ip) return id;
  }
  throw new Error(`no worker id left for ${ip}`);
}

function octets(ip: string): number[] {
  if (!isIPv4(ip)) throw new Error(`not an IPv4 address: ${ip}`);
  return ip.split('.').map(Number);
}
