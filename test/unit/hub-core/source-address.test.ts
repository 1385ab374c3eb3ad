import { describe, expect, it } from 'vitest';
import { sourceOf } from '../../../hub-core/src/domain/source-address.ts';

describe('sourceOf: whom a per-source limit counts', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['::FFFF:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0000:0000:0000:0009', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
    ['', ''],
    [undefined, ''],
  ])('%s → %s', (remote, source) => {
    expect(sourceOf(remote)).toBe(source);
  });

  it('puts every address of one IPv6 /64 under one source, and the next /64 under another', () => {
    const hosts = Array.from({ length: 50 }, (_, i) => `2001:db8:5:7:${i.toString(16)}::${(i * 7).toString(16)}`);
    expect(new Set(hosts.map(sourceOf))).toEqual(new Set(['2001:db8:5:7::/64']));
    expect(sourceOf('2001:db8:5:8::1')).not.toBe(sourceOf('2001:db8:5:7::1'));
  });
});
