// Where the live view listens. Never on every interface unless the operator says so
// (--view-bind): the worker's LAN address when this host owns it, else loopback only.
import net from 'node:net';

export interface ViewBind {
  /** The address the server listens on. */
  host: string;
  /** The address put into view URLs (what the console's browser connects to). */
  publicHost: string;
}

export const isWildcard = (addr: string) => addr === '0.0.0.0' || addr === '::';
const isLoopback = (addr: string) => addr === '::1' || /^127\./.test(addr);

/** The bind to try first, and (without --view-bind) the loopback one if the LAN address is not ours. */
export function planViewBind(lanIp: string, viewBind?: string): { first: ViewBind; fallback?: ViewBind } {
  // An explicit bind is the operator's choice: no fallback. Viewers use the LAN address unless
  // the bind is loopback, which nothing else can reach.
  if (viewBind) return { first: { host: viewBind, publicHost: isLoopback(viewBind) ? viewBind : lanIp } };
  return { first: { host: lanIp, publicHost: lanIp }, fallback: isLoopback(lanIp) ? undefined : { host: '127.0.0.1', publicHost: '127.0.0.1' } };
}

/** `--view-bind` accepts an IP literal (IPv4 or IPv6), wildcards included. */
export function validViewBind(addr: string): boolean {
  return net.isIP(addr) !== 0;
}
