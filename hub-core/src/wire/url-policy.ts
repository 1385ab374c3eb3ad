// The egress policy for jobs and sessions (PAPRIKA_URL_DENY / PAPRIKA_URL_ALLOW): which URLs a
// lane's browser may reach. Pure: parse a list of rules once, then check a URL (or a host and
// port, for a proxy's CONNECT) against it, with the addresses its name resolved to if known.
// Hosts are checked in the WHATWG-normalised form (`new URL`), so `http://2852039166/`,
// `http://0xA9FEA9FE/` and `http://0251.0376.0251.0376/` are all 169.254.169.254.
import os from 'node:os';
import { digitsValue } from './env.ts';
import type { UrlPolicyLists } from './protocol.ts';

/** Always denied: link-local (cloud metadata lives there), the AWS IPv6 and Alibaba metadata, "this host" (0.0.0.0 reaches loopback on Linux). */
export const BUILTIN_DENY: readonly string[] = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254', '100.100.100.200', 'metadata.google.internal', '0.0.0.0/8', '::/128'];

/** Schemes a page may use that never leave the browser. */
const LOCAL_SCHEMES = new Set(['data:', 'blob:']);
const NETWORK_SCHEMES: Record<string, number> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 };

type Cidr = { family: 4 | 6; network: bigint; prefix: number };
export type UrlRule = { text: string; port?: number } & ({ kind: 'cidr'; cidr: Cidr } | { kind: 'host'; host: string; subdomains: boolean } | { kind: 'any' });

export interface UrlPolicy {
  readonly deny: readonly UrlRule[];
  /** null: everything not denied is allowed. */
  readonly allow: readonly UrlRule[] | null;
}

export type UrlVerdict = { allowed: true } | { allowed: false; rule: string };

export class UrlRuleError extends Error {
  constructor(
    readonly entry: string,
    reason: string,
  ) {
    super(`${JSON.stringify(entry)}: ${reason}`);
    this.name = 'UrlRuleError';
  }
}

/** Comma-separated (or already split) rules → parsed rules; throws UrlRuleError naming the bad entry. */
export function parseRules(list: string | readonly string[]): UrlRule[] {
  const entries = typeof list === 'string' ? list.split(',') : list;
  return entries.map((e) => e.trim()).filter((e) => e !== '').map(parseRule);
}

export function parsePolicy(lists: { deny: string | readonly string[]; allow?: string | readonly string[] | null }): UrlPolicy {
  const allow = lists.allow === undefined || lists.allow === null ? null : parseRules(lists.allow);
  // An ALLOW that parses to nothing (`PAPRIKA_URL_ALLOW=,`) would mean "allow nothing": treat it as unset.
  return { deny: [...parseRules(BUILTIN_DENY), ...parseRules(lists.deny)], allow: allow && allow.length > 0 ? allow : null };
}

function parseRule(entry: string): UrlRule {
  const text = entry;
  let s = entry.toLowerCase();
  let port: number | undefined;
  if (s.startsWith('[')) {
    // [v6], [v6]:port, [v6/len], [v6/len]:port
    const end = s.indexOf(']');
    if (end < 0) throw new UrlRuleError(entry, 'unclosed [');
    const rest = s.slice(end + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) throw new UrlRuleError(entry, 'expected :port after ]');
      port = parsePort(entry, rest.slice(1));
    }
    s = s.slice(1, end);
    const cidr = parseCidr(s, 6);
    if (!cidr) throw new UrlRuleError(entry, 'not an IPv6 address or CIDR');
    return { text, port, kind: 'cidr', cidr };
  }
  const colons = s.split(':').length - 1;
  if (colons > 1) {
    // A bare IPv6 address or CIDR (no port: write [v6]:port for one).
    const cidr = parseCidr(s, 6);
    if (!cidr) throw new UrlRuleError(entry, 'not an IPv6 address or CIDR (use [addr]:port for a port)');
    return { text, kind: 'cidr', cidr };
  }
  if (colons === 1) {
    const at = s.lastIndexOf(':');
    port = parsePort(entry, s.slice(at + 1));
    s = s.slice(0, at);
  }
  if (s === '*') {
    if (port === undefined) throw new UrlRuleError(entry, '* needs a port (*:PORT)');
    return { text, port, kind: 'any' };
  }
  if (/^[\d.]+(\/\d+)?$/.test(s)) {
    const cidr = parseCidr(s, 4);
    if (!cidr) throw new UrlRuleError(entry, 'not an IPv4 address or CIDR');
    return { text, port, kind: 'cidr', cidr };
  }
  const subdomains = s.startsWith('*.');
  const host = (subdomains ? s.slice(2) : s).replace(/\.$/, '');
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host)) throw new UrlRuleError(entry, 'not a host name, address, CIDR, host:port or *:port');
  return { text, port, kind: 'host', host, subdomains };
}

function parsePort(entry: string, raw: string): number {
  const n = digitsValue(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UrlRuleError(entry, `bad port ${JSON.stringify(raw)}`);
  return n;
}

function parseCidr(s: string, family: 4 | 6): Cidr | undefined {
  const [addr, len, extra] = s.split('/');
  if (extra !== undefined) return undefined;
  const value = family === 4 ? ipv4Value(addr, true) : ipv6Value(addr);
  if (value === undefined) return undefined;
  const bits = family === 4 ? 32 : 128;
  const prefix = len === undefined ? bits : Number(len);
  if (len !== undefined && (!/^\d+$/.test(len) || prefix > bits)) return undefined;
  return { family, network: value & mask(prefix, bits), prefix };
}

function mask(prefix: number, bits: number): bigint {
  return prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
}

/** Strict dotted quad (rules) or any form after WHATWG normalisation (which yields dotted quads). */
function ipv4Value(s: string, strict = false): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255 || (strict && p.length > 1 && p.startsWith('0')))) return undefined;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n);
}

/** An IPv6 address (hex groups, `::`, optional dotted IPv4 tail) → 128-bit value. */
function ipv6Value(s: string): bigint | undefined {
  let text = s;
  let tail: bigint | undefined;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail = ipv4Value(text.slice(lastColon + 1));
    if (tail === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 2 && missing < 1) || (halves.length === 1 && missing !== 0)) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (all.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  let value = all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
  if (tail !== undefined) value = (value & ~0xffffffffn) | tail;
  return value;
}

type Address = { family: 4 | 6; value: bigint };

/** An address literal (as a URL or dns.lookup gives it) → the addresses to check: an IPv4-mapped IPv6 counts as its IPv4 too. */
export function addressesOf(literal: string): Address[] {
  const bare = literal.replace(/^\[|\]$/g, '');
  const v4 = ipv4Value(bare);
  if (v4 !== undefined) return [{ family: 4, value: v4 }];
  const v6 = ipv6Value(bare.toLowerCase());
  if (v6 === undefined) return [];
  const out: Address[] = [{ family: 6, value: v6 }];
  if (v6 >> 32n === 0xffffn) out.push({ family: 4, value: v6 & 0xffffffffn });
  return out;
}

function inCidr(a: Address, c: Cidr): boolean {
  return a.family === c.family && (a.value & mask(c.prefix, c.family === 4 ? 32 : 128)) === c.network;
}

/** `localhost` and `*.localhost` are loopback whatever DNS says (WHATWG and Chrome resolve them so). */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

interface Target {
  /** Lowercase, without brackets or a trailing dot. */
  host: string;
  port: number;
  /** One group per address literal: an IPv4-mapped IPv6 is a group of two (either form may match). */
  addresses: Address[][];
  isName: boolean;
}

function targetOf(host: string, port: number, resolvedIps: readonly string[] = []): Target {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const literal = addressesOf(h);
  if (literal.length > 0) return { host: h, port, addresses: [literal], isName: false };
  const ips = isLocalhostName(h) ? ['127.0.0.1', '::1', ...resolvedIps] : resolvedIps;
  return { host: h, port, addresses: ips.map(addressesOf).filter((g) => g.length > 0), isName: true };
}

function hostMatches(rule: Extract<UrlRule, { kind: 'host' }>, host: string): boolean {
  return rule.subdomains ? host.endsWith(`.${rule.host}`) : host === rule.host;
}

function ruleMatchesAny(rule: UrlRule, t: Target): boolean {
  if (rule.port !== undefined && rule.port !== t.port) return false;
  if (rule.kind === 'any') return true;
  if (rule.kind === 'host') return t.isName && hostMatches(rule, t.host);
  return t.addresses.some((group) => group.some((a) => inCidr(a, rule.cidr)));
}

/** A host (name or address literal) and port, as a CONNECT or a resolved request sees them. */
export function checkTarget(policy: UrlPolicy, host: string, port: number, resolvedIps?: readonly string[]): UrlVerdict {
  const t = targetOf(host, port, resolvedIps);
  const denied = policy.deny.find((r) => ruleMatchesAny(r, t));
  if (denied) return { allowed: false, rule: denied.text };
  if (policy.allow === null) return { allowed: true };
  // Allowed by name, or every address it resolves to is allowed (one bad address is enough to refuse).
  if (t.isName && policy.allow.some((r) => r.kind === 'host' && (r.port === undefined || r.port === port) && hostMatches(r, t.host))) return { allowed: true };
  if (policy.allow.some((r) => r.kind === 'any' && r.port === port)) return { allowed: true };
  const cidrs = policy.allow.filter((r): r is Extract<UrlRule, { kind: 'cidr' }> => r.kind === 'cidr' && (r.port === undefined || r.port === port));
  if (t.addresses.length > 0 && t.addresses.every((group) => group.some((a) => cidrs.some((r) => inCidr(a, r.cidr))))) return { allowed: true };
  return { allowed: false, rule: 'not in PAPRIKA_URL_ALLOW' };
}

/** The host, port and scheme the browser would contact for `url`, or why it is refused outright. */
export function networkTarget(url: string | URL): { host: string; port: number } | { local: true } | { refused: string } {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return { refused: 'not a URL' };
  }
  if (u.href === 'about:blank' || u.href === 'about:srcdoc' || LOCAL_SCHEMES.has(u.protocol)) return { local: true };
  const defaultPort = NETWORK_SCHEMES[u.protocol];
  // file:, chrome:, view-source:, javascript:, ftp: and the rest: never from a job.
  if (defaultPort === undefined) return { refused: `scheme ${u.protocol}` };
  return { host: u.hostname, port: u.port === '' ? defaultPort : Number(u.port) };
}

export function checkUrl(policy: UrlPolicy, url: string | URL, resolvedIps?: readonly string[]): UrlVerdict {
  const t = networkTarget(url);
  if ('local' in t) return { allowed: true };
  if ('refused' in t) return { allowed: false, rule: t.refused };
  return checkTarget(policy, t.host, t.port, resolvedIps);
}

/** A host the policy can judge without DNS (an address literal or a localhost name). */
export function needsResolution(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return addressesOf(h).length === 0 && !isLocalhostName(h);
}

/**
 * `host:port` rules for a listening address: always every loopback form; a wildcard bind
 * listens on every address of the host too (`interfaces`, hostAddresses()), so a job could reach
 * it at the host's LAN or global address; a bound address, that address.
 */
export function ownAddressRules(host: string, port: number, interfaces: readonly string[] = []): string[] {
  const h = host.replace(/^\[|\]$/g, '');
  const wildcard = h === '0.0.0.0' || h === '::' || h === '';
  const rule = (a: string) => (a.includes(':') ? `[${a}]:${port}` : `${a}:${port}`);
  const rules = [`127.0.0.0/8:${port}`, `[::1]:${port}`, `localhost:${port}`];
  if (!wildcard) rules.push(rule(h));
  else rules.push(...interfaces.map(rule));
  return rules;
}

/** Every address of this host's interfaces (what a wildcard bind listens on), link-local scope ids left out. */
export function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .flatMap((i) => (i ? [i.address.replace(/%.*$/, '')] : []));
}
