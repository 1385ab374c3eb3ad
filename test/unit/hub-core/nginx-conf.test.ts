import { describe, expect, it } from 'vitest';
import { nginxConf, parseNginxFlags } from '../../../hub-core/src/cli/nginx-conf.ts';

describe('paprika nginx-conf', () => {
  it('puts every hub in both upstreams: consistent hash for links, round-robin for the rest', () => {
    const conf = nginxConf(parseNginxFlags(['--hub', '10.0.0.1:8080', '--hub', '10.0.0.2:8080', '--listen', '127.0.0.1:9000']));
    const links = conf.slice(conf.indexOf('upstream paprika_links'), conf.indexOf('upstream paprika_hubs'));
    expect(links).toMatch(/hash \$paprika_worker_id consistent;/);
    expect(links.match(/server 10\.0\.0\.[12]:8080/g)).toHaveLength(2);
    expect(conf).toMatch(/location ~ \^\/workers\/\(\?<paprika_worker_id>/);
    expect(conf).toMatch(/location = \/admin\/events \{[^}]*Upgrade \$http_upgrade/);
    expect(conf).toMatch(/listen 127\.0\.0\.1:9000;/);
  });

  it.each([
    [[], /--hub HOST:PORT is required/],
    [['--hub', 'nohost'], /--hub expects HOST:PORT/],
    [['--hub', 'a:1', '--listen', 'x'], /--listen expects PORT or ADDR:PORT/],
    [['--hub', 'a:1', '--bogus'], /Unknown option '--bogus'/],
  ])('rejects %j naming the flag', (argv, message) => {
    expect(() => parseNginxFlags(argv as string[])).toThrow(message);
  });
});
