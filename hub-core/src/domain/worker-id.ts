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
 * The ids an IP may take, in order of preference. The rule every registry applies: the first
 * one that is free or already held by the same IP. Addresses in different /16s can want the
 * same short id (10.10.5.150 and 10.10.51.50 both make `w5150`): the second gets the long form.
 */
export function workerIdCandidates(ip: string): [string, string] {
  return [shortWorkerId(ip), longWorkerId(ip)];
}

/** `holderOf(id)` tells which IP holds an id now (undefined: free). Same IP → same id. */
export function workerIdFor(ip: string, holderOf: (id: string) => string | undefined): string {
  for (const id of workerIdCandidates(ip)) {
    const holder = holderOf(id);
    if (holder === undefined || holder === ip) return id;
  }
  throw new Error(`no worker id left for ${ip}`);
}

function octets(ip: string): number[] {
  if (!isIPv4(ip)) throw new Error(`not an IPv4 address: ${ip}`);
  return ip.split('.').map(Number);
}
