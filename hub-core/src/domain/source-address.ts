// Whom a per-source limit counts a connection against. An IPv4 address (also written as an
// IPv4-mapped IPv6 one) is itself; an IPv6 address counts as its /64, the block one host or one
// customer is usually given: per /128, one host with an IPv6 /64 had more addresses than any
// limit and filled a hub-wide cap alone.
import net from 'node:net';

export function sourceOf(remote: string | undefined): string {
  if (!remote) return '';
  const address = remote.replace(/%.*$/, ''); // a zone index (fe80::1%eth0)
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1];
  if (!net.isIPv6(address)) return address;
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, as lowercase hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  // A trailing dotted IPv4 part is the last two groups.
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  let text = address;
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${address.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  const groups = tail === undefined ? part(head) : [...part(head), ...Array<string>(8 - part(head).length - part(tail).length).fill('0'), ...part(tail)];
  return groups.map((g) => parseInt(g, 16).toString(16));
}
