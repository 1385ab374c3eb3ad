import { describe, expect, it } from 'vitest';
import { checkTarget, checkUrl, hostAddresses, needsResolution, ownAddressRules, parsePolicy, parseRules, UrlRuleError } from '../../../hub-core/src/wire/url-policy.ts';

const builtin = parsePolicy({ deny: [] });
const withHub = parsePolicy({ deny: ownAddressRules('0.0.0.0', 8080) });

describe('checkUrl with the built-in deny list', () => {
  const cases: Array<[string, string | null]> = [
    ['http://169.254.169.254/latest/meta-data/', '169.254.0.0/16'],
    // WHATWG URL parsing normalises these to 169.254.169.254 before the check
    ['http://2852039166/', '169.254.0.0/16'],
    ['http://0xA9FEA9FE/', '169.254.0.0/16'],
    ['http://0251.0376.0251.0376/', '169.254.0.0/16'],
    ['http://169.254.169.254./', '169.254.0.0/16'],
    ['http://[::ffff:169.254.169.254]/', '169.254.0.0/16'],
    ['http://[::ffff:a9fe:a9fe]:8080/', '169.254.0.0/16'],
    ['http://[fe80::1]/', 'fe80::/10'],
    ['http://[FEBF::1]/', 'fe80::/10'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254'],
    ['http://[fd00:ec2::253]/', null],
    ['http://100.100.100.200/', '100.100.100.200'],
    ['http://metadata.google.internal/', 'metadata.google.internal'],
    ['http://METADATA.google.internal./', 'metadata.google.internal'],
    ['http://0.0.0.0:8080/', '0.0.0.0/8'],
    ['http://0/', '0.0.0.0/8'],
    ['http://[::]/', '::/128'],
    ['https://example.org/', null],
    ['http://127.0.0.1:3000/', null],
    ['http://169.253.255.255/', null],
    ['http://169.255.0.0/', null],
    ['file:///etc/passwd', 'scheme file:'],
    ['chrome://settings', 'scheme chrome:'],
    ['view-source:http://example.org/', 'scheme view-source:'],
    ['javascript:alert(1)', 'scheme javascript:'],
    ['ftp://example.org/', 'scheme ftp:'],
    ['about:blank', null],
    ['data:text/html,hi', null],
    ['blob:http://example.org/0b0c', null],
    ['not a url', 'not a URL'],
  ];
  it.each(cases)('%s → %s', (url, rule) => {
    expect(checkUrl(builtin, url)).toEqual(rule === null ? { allowed: true } : { allowed: false, rule });
  });
});

describe("the hub's own port", () => {
  const cases: Array<[string, string | null]> = [
    ['http://127.0.0.1:8080/metrics', '127.0.0.0/8:8080'],
    ['http://127.1.2.3:8080/', '127.0.0.0/8:8080'],
    ['http://2130706433:8080/', '127.0.0.0/8:8080'],
    ['http://0x7f.1:8080/', '127.0.0.0/8:8080'],
    ['http://[::1]:8080/', '[::1]:8080'],
    ['http://[::ffff:127.0.0.1]:8080/', '127.0.0.0/8:8080'],
    ['http://localhost:8080/', '127.0.0.0/8:8080'],
    ['http://LocalHost.:8080/', '127.0.0.0/8:8080'],
    ['http://app.localhost:8080/', '127.0.0.0/8:8080'],
    ['ws://127.0.0.1:8080/workers/w1/link', '127.0.0.0/8:8080'],
    ['http://127.0.0.1:8081/', null],
    ['http://localhost/', null],
  ];
  it.each(cases)('%s → %s', (url, rule) => {
    expect(checkUrl(withHub, url)).toEqual(rule === null ? { allowed: true } : { allowed: false, rule });
  });
});

describe('rules', () => {
  const policy = parsePolicy({ deny: '10.0.0.0/8, 192.168.1.10:22, [2001:db8::/32], [2001:db8:1::1]:443, *:6379, internal.example, *.corp.example:8443' });
  const cases: Array<[string, string[] | undefined, string | null]> = [
    ['http://10.1.2.3/', undefined, '10.0.0.0/8'],
    ['http://11.1.2.3/', undefined, null],
    ['http://192.168.1.10:22/', undefined, '192.168.1.10:22'],
    ['http://192.168.1.10/', undefined, null],
    ['http://[2001:db8:ffff::1]/', undefined, '[2001:db8::/32]'],
    ['https://[2001:db8:1::1]/', undefined, '[2001:db8::/32]'],
    ['https://[2001:db9::1]/', undefined, null],
    ['http://example.org:6379/', undefined, '*:6379'],
    ['http://internal.example/', undefined, 'internal.example'],
    ['http://sub.internal.example/', undefined, null],
    ['https://a.corp.example:8443/', undefined, '*.corp.example:8443'],
    ['https://corp.example:8443/', undefined, null],
    ['https://a.corp.example/', undefined, null],
    // DNS rebinding: a harmless name that resolves to a denied address is denied
    ['http://rebind.example/', ['93.184.216.34', '10.0.0.5'], '10.0.0.0/8'],
    ['http://rebind.example/', ['::ffff:10.0.0.5'], '10.0.0.0/8'],
    ['http://rebind.example/', ['169.254.169.254'], '169.254.0.0/16'],
    ['http://ok.example/', ['93.184.216.34'], null],
  ];
  it.each(cases)('%s (resolved %j) → %s', (url, ips, rule) => {
    expect(checkUrl(policy, url, ips)).toEqual(rule === null ? { allowed: true } : { allowed: false, rule });
  });

  it('default ports are 80 and 443', () => {
    const p = parsePolicy({ deny: 'a.example:80, b.example:443' });
    expect(checkUrl(p, 'http://a.example/').allowed).toBe(false);
    expect(checkUrl(p, 'https://a.example/').allowed).toBe(true);
    expect(checkUrl(p, 'https://b.example/').allowed).toBe(false);
    expect(checkUrl(p, 'wss://b.example/x').allowed).toBe(false);
    expect(checkTarget(p, 'b.example', 443)).toEqual({ allowed: false, rule: 'b.example:443' });
  });

  it.each([
    ['10.0.0.0/33', /IPv4/],
    ['300.1.1.1', /IPv4/],
    ['010.1.1.1', /IPv4/],
    ['fe80::/129', /IPv6/],
    ['[::1', /unclosed/],
    ['[::1]x', /:port/],
    ['host:0', /bad port/],
    ['host:99999', /bad port/],
    ['*', /needs a port/],
    ['http://x/', /./],
    ['bad host!', /host name/],
  ])('refuses %s', (entry, message) => {
    expect(() => parseRules(entry)).toThrow(UrlRuleError);
    expect(() => parseRules(entry)).toThrow(message);
  });

  it('ignores empty entries and spaces', () => {
    expect(parseRules(' , 10.0.0.0/8 ,, ').map((r) => r.text)).toEqual(['10.0.0.0/8']);
  });
});

describe('PAPRIKA_URL_ALLOW', () => {
  const policy = parsePolicy({ deny: '10.9.0.0/16', allow: 'example.org, *.example.org, 10.0.0.0/8, *:8443' });
  const cases: Array<[string, string[] | undefined, string | null]> = [
    ['https://example.org/', undefined, null],
    ['https://www.example.org/', undefined, null],
    ['https://example.com/', undefined, 'not in PAPRIKA_URL_ALLOW'],
    ['http://10.1.1.1/', undefined, null],
    ['http://[::ffff:10.1.1.1]/', undefined, null],
    // deny wins over allow
    ['http://10.9.1.1/', undefined, '10.9.0.0/16'],
    ['http://169.254.169.254/', undefined, '169.254.0.0/16'],
    ['https://any.example:8443/', undefined, null],
    // a name allowed by its addresses only if every address is allowed
    ['http://svc.internal/', ['10.2.2.2'], null],
    ['http://svc.internal/', ['10.2.2.2', '8.8.8.8'], 'not in PAPRIKA_URL_ALLOW'],
    ['http://svc.internal/', undefined, 'not in PAPRIKA_URL_ALLOW'],
    // a denied resolution beats an allowed name
    ['https://www.example.org/', ['10.9.9.9'], '10.9.0.0/16'],
  ];
  it.each(cases)('%s (resolved %j) → %s', (url, ips, rule) => {
    expect(checkUrl(policy, url, ips)).toEqual(rule === null ? { allowed: true } : { allowed: false, rule });
  });

  it('an empty allow list means unset', () => {
    expect(parsePolicy({ deny: '', allow: ' , ' }).allow).toBeNull();
  });
});

describe('needsResolution', () => {
  it.each([
    ['example.org', true],
    ['127.0.0.1', false],
    ['[::1]', false],
    ['localhost', false],
    ['x.localhost.', false],
  ])('%s → %s', (host, yes) => expect(needsResolution(host)).toBe(yes));
});

describe('ownAddressRules', () => {
  it("a wildcard bind denies the port on every address of the host (a job could reach the hub at the host's LAN or global address), a bound address only that one", () => {
    const host = ['192.0.2.2', 'fd00::2', 'fe80::fc:ff:fe00:1'];
    const wildcard = parsePolicy({ deny: ownAddressRules('0.0.0.0', 8080, host) });
    for (const url of ['http://192.0.2.2:8080/jobs', 'http://[fd00::2]:8080/jobs', 'http://[fe80::fc:ff:fe00:1]:8080/', 'http://127.0.0.1:8080/', 'http://localhost:8080/']) expect(checkUrl(wildcard, url).allowed, url).toBe(false);
    expect(checkUrl(wildcard, 'http://192.0.2.2:8081/').allowed).toBe(true);
    expect(checkUrl(parsePolicy({ deny: ownAddressRules('::', 8080, host) }), 'http://192.0.2.2:8080/').allowed).toBe(false);
    const bound = parsePolicy({ deny: ownAddressRules('192.0.2.2', 8080, host) });
    expect(checkUrl(bound, 'http://192.0.2.2:8080/').allowed).toBe(false);
    expect(checkUrl(bound, 'http://[fd00::2]:8080/').allowed).toBe(true);
  });

  it('hostAddresses lists this host\'s interface addresses, loopback included, without scope ids', () => {
    const all = hostAddresses();
    expect(all).toContain('127.0.0.1');
    expect(all.every((a) => !a.includes('%'))).toBe(true);
  });
});
