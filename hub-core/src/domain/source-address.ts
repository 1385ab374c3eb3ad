// Whom a per-source limit counts a connection against. An IPv4 address (also written as an
// IPv4-mapped IPv6 one) is itself; an IPv6 address counts as its /64, the block one host or one
// customer is usually given: per /128, one host with an IPv6 /64 had more addresses than any
// limit and filled a hub-wide cap alone. Addresses are read by the egress policy's parser.
import { addressesOf } from '../wire/url-policy.ts';

export function sourceOf(remote: string | undefined): string {
  if (!remote) return '';
  const address = remote.replace(/%.*$/, ''); // a zone index (fe80::1%eth0)
  const parsed = addressesOf(address);
  const v4 = parsed.find((a) => a.family === 4);
  if (v4) return [24n, 16n, 8n, 0n].map((shift) => (v4.value >> shift) & 0xffn).join('.');
  if (parsed.length === 0) return address;
  const high = parsed[0].value >> 64n;
  return `${[48n, 32n, 16n, 0n].map((shift) => ((high >> shift) & 0xffffn).toString(16)).join(':')}::/64`;
}
