// The worker's egress policy: the hub's lists (from `welcome`) plus the worker's own addresses
// (its live-view server, its lanes' proxies, the hub it links to), with a short DNS cache so a
// name is judged by every address it resolves to (DNS rebinding: a harmless name pointing at
// 169.254.169.254 is denied like the address itself).
import dns from 'node:dns/promises';
import { checkTarget, checkUrl, needsResolution, networkTarget, parsePolicy, type UrlPolicy, type UrlPolicyLists, type UrlVerdict } from 'paprika/wire';

const DNS_TTL_MS = 5000;
const DNS_CACHE_MAX = 1000;

export type TargetVerdict = (UrlVerdict & { allowed: false }) | { allowed: true; /** The address to connect to: the one that was checked. */ address: string };

export class EgressGuard {
  private hubLists: UrlPolicyLists = { deny: [], allow: null };
  private readonly own = new Set<string>();
  private policy: UrlPolicy;
  private readonly dnsCache = new Map<string, { ips: string[]; at: number }>();

  constructor(own: readonly string[] = []) {
    for (const r of own) this.own.add(r);
    this.policy = this.build();
  }

  /** The hub's rules; a list this worker cannot parse throws and the previous policy stays. */
  setHubLists(lists: UrlPolicyLists): void {
    const previous = this.hubLists;
    this.hubLists = { deny: [...lists.deny], allow: lists.allow ? [...lists.allow] : null };
    try {
      this.policy = this.build();
    } catch (err) {
      this.hubLists = previous;
      throw err;
    }
  }

  /** The worker's own listening addresses (`host:port` rules), always denied. */
  addOwn(rules: readonly string[]): void {
    for (const r of rules) this.own.add(r);
    this.policy = this.build();
  }

  get lists(): UrlPolicyLists {
    return { deny: [...this.hubLists.deny, ...this.own], allow: this.hubLists.allow };
  }

  private build(): UrlPolicy {
    return parsePolicy(this.lists);
  }

  /** A URL a lane is about to open: denied schemes and hosts, names by what they resolve to. */
  async checkUrl(url: string): Promise<UrlVerdict> {
    const t = networkTarget(url);
    if (!('host' in t)) return checkUrl(this.policy, url);
    return this.checkTarget(t.host, t.port);
  }

  /** Judge host:port and say which address to connect to (so the connection uses the address that was checked). */
  async checkTarget(host: string, port: number): Promise<TargetVerdict> {
    const bare = host.replace(/^\[|\]$/g, '');
    if (!needsResolution(bare)) {
      const v = checkTarget(this.policy, bare, port);
      return v.allowed ? { allowed: true, address: /^localhost\.?$|\.localhost\.?$/i.test(bare) ? '127.0.0.1' : bare } : v;
    }
    // A name judged first by its name rules: a denied name is refused without a DNS query.
    const byName = checkTarget(this.policy, bare, port, []);
    if (!byName.allowed && byName.rule !== 'not in PAPRIKA_URL_ALLOW') return byName;
    const ips = await this.resolve(bare);
    const v = checkTarget(this.policy, bare, port, ips);
    return v.allowed ? { allowed: true, address: ips[0] } : v;
  }

  private async resolve(host: string): Promise<string[]> {
    const now = Date.now();
    const hit = this.dnsCache.get(host);
    if (hit && now - hit.at < DNS_TTL_MS) return hit.ips;
    const ips = (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    if (ips.length === 0) throw new Error(`${host} has no address`);
    if (this.dnsCache.size >= DNS_CACHE_MAX) this.dnsCache.clear();
    this.dnsCache.set(host, { ips, at: now });
    return ips;
  }
}
