import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../hub-core/src/config.ts';

describe('loadConfig', () => {
  it("has the seed's defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      bind: '127.0.0.1',
      heartbeatS: 15,
      workerTtlS: 120,
      hubHeartbeatS: 30,
      hubTtlS: 90,
      assignWaitS: 8,
      forwardTimeoutS: 60,
      queueRedriveIntervalS: 3,
      queueRedriveDisable: false,
      redriveMinAgeS: 90,
      reconcileIntervalS: 90,
      orphanGraceS: 300,
      queuedTimeoutS: 180,
      jobTimeoutS: 180,
      diskMaxPct: 90,
      fleetTimeoutMs: 1500,
      fleetCacheS: 60,
      jitterMaxS: 60,
      maxQueued: 10000,
      linkPendingMax: 256,
      linkPendingPerIp: 64,
    });
    expect(c.hubId).toMatch(/^hub-.+-8080$/);
    expect(c.hubUrl).toBe('http://127.0.0.1:8080');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.redisUrl).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('accepts fractions for every _S variable', () => {
    const c = loadConfig({ PAPRIKA_HEARTBEAT_S: '0.05', PAPRIKA_WORKER_TTL_S: '0.5', PAPRIKA_REDRIVE_MIN_AGE_S: '0.25', PAPRIKA_ORPHAN_GRACE_S: '1.5' });
    expect([c.heartbeatS, c.workerTtlS, c.redriveMinAgeS, c.orphanGraceS]).toEqual([0.05, 0.5, 0.25, 1.5]);
  });

  it.each([
    ['PAPRIKA_PORT', 'abc', /PAPRIKA_PORT: expected a decimal number/],
    ['PAPRIKA_PORT', '0x10', /PAPRIKA_PORT: expected a decimal number/],
    ['PAPRIKA_HEARTBEAT_S', 'Infinity', /PAPRIKA_HEARTBEAT_S: expected a decimal number/],
    // Node runs a timer longer than 2^31-1 ms after 1 ms: a 30-day reconcile period spun the hub at 86 % CPU.
    ['PAPRIKA_RECONCILE_INTERVAL_S', '2592000', /PAPRIKA_RECONCILE_INTERVAL_S: must be at most 2147483.647 seconds \(about 24.8 days/],
    ['PAPRIKA_QUEUE_REDRIVE_INTERVAL_S', '99999999999', /PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: must be at most/],
    ['PAPRIKA_BODY_TIMEOUT_S', '2592000', /PAPRIKA_BODY_TIMEOUT_S: must be at most/],
    ['PAPRIKA_ASSIGN_WAIT_S', '1e12', /PAPRIKA_ASSIGN_WAIT_S: must be at most/],
    ['PAPRIKA_ASSET_RETENTION_S', '1e12', /PAPRIKA_ASSET_RETENTION_S: must be at most 315360000 seconds \(ten years\)/],
    ['PAPRIKA_FLEET_TIMEOUT_MS', '3000000000', /PAPRIKA_FLEET_TIMEOUT_MS: must be at most 2147483647/],
    ['PAPRIKA_URL_ALLOW', ',', /PAPRIKA_URL_ALLOW: holds no rule/],
    ['PAPRIKA_PORT', '70000', /PAPRIKA_PORT: must be at most 65535/],
    ['PAPRIKA_HEARTBEAT_S', '0', /PAPRIKA_HEARTBEAT_S: must be greater than 0/],
    ['PAPRIKA_DISK_MAX_PCT', '-5', /PAPRIKA_DISK_MAX_PCT: must be at least 0/],
    ['PAPRIKA_QUEUE_REDRIVE_DISABLE', 'yes', /PAPRIKA_QUEUE_REDRIVE_DISABLE: expected 1 or 0/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL: expected a postgres: or postgresql: URL/],
    ['REDIS_URL', 'not a url', /REDIS_URL: not a valid URL/],
    ['PAPRIKA_MAX_QUEUED', '1.5', /PAPRIKA_MAX_QUEUED: expected a whole number/],
    ['PAPRIKA_LINK_PENDING_MAX', '0', /PAPRIKA_LINK_PENDING_MAX: must be at least 1/],
    ['PAPRIKA_LINK_PENDING_PER_IP', '2.5', /PAPRIKA_LINK_PENDING_PER_IP: expected a whole number/],
    ['PAPRIKA_LINK_PENDING_PER_IP', 'lots', /PAPRIKA_LINK_PENDING_PER_IP: expected a decimal number/],
    ['PAPRIKA_URL_DENY', '10.0.0.0/8, 10.0.0.0/40', /PAPRIKA_URL_DENY: bad rule "10.0.0.0\/40"/],
    ['PAPRIKA_URL_ALLOW', 'example.org:0', /PAPRIKA_URL_ALLOW: bad rule "example.org:0": bad port/],
  ])('rejects %s=%s naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('binds to 0.0.0.0 once a token is set, and honours PAPRIKA_BIND', () => {
    expect(loadConfig({ PAPRIKA_API_TOKEN: 't', PAPRIKA_ADMIN_TOKEN: 'a', PAPRIKA_WORKER_TOKEN: 'w', PAPRIKA_PEER_TOKEN: 'p' }).bind).toBe('0.0.0.0');
    expect(loadConfig({ PAPRIKA_BIND: '::1' }).bind).toBe('::1');
    expect(loadConfig({ PAPRIKA_BIND: 'localhost' }).bind).toBe('localhost');
    // A typo is named as what it is, not as a non-loopback address missing tokens.
    for (const typo of ['localhst', '127.0.0', 'example.org']) expect(() => loadConfig({ PAPRIKA_BIND: typo })).toThrow(/PAPRIKA_BIND.*expects an IP address to listen on/);
  });

  it('refuses a non-loopback bind while a route group has no token, naming the unset variables and the ways out', () => {
    const attempt = () => loadConfig({ PAPRIKA_ADMIN_TOKEN: 'a' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/PAPRIKA_API_TOKEN, PAPRIKA_WORKER_TOKEN, PAPRIKA_PEER_TOKEN/);
    expect(attempt).toThrow(/PAPRIKA_INSECURE=1/);
    expect(attempt).toThrow(/PAPRIKA_BIND=127\.0\.0\.1/);
    // Setting one token moved the default bind: the message says so (it read as if 0.0.0.0 had been asked for).
    expect(attempt).toThrow(/listen on 0\.0\.0\.0 \(the default once any token is set\)/);
    expect(() => loadConfig({ PAPRIKA_BIND: '0.0.0.0' })).toThrow(/PAPRIKA_ADMIN_TOKEN/);
    expect(() => loadConfig({ PAPRIKA_BIND: '0.0.0.0' })).not.toThrow(/the default/);
    expect(loadConfig({ PAPRIKA_ADMIN_TOKEN: 'a', PAPRIKA_BIND: '127.0.0.1' }).bind).toBe('127.0.0.1');
    const insecure = loadConfig({ PAPRIKA_ADMIN_TOKEN: 'a', PAPRIKA_INSECURE: '1' });
    expect(insecure.bind).toBe('0.0.0.0');
    expect(insecure.insecure).toBe(true);
  });

  it('reads PAPRIKA_METRICS_TOKEN and checks PAPRIKA_INSECURE', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ PAPRIKA_METRICS_TOKEN: 'm' }).metricsToken).toBe('m');
    expect(() => loadConfig({ PAPRIKA_INSECURE: 'yes' })).toThrow(/PAPRIKA_INSECURE/);
  });

  it('requires the S3 bucket and keys once an endpoint is set', () => {
    expect(() => loadConfig({ PAPRIKA_S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow(/PAPRIKA_S3_BUCKET/);
  });

  it('refuses a worker TTL shorter than the heartbeat', () => {
    expect(() => loadConfig({ PAPRIKA_HEARTBEAT_S: '10', PAPRIKA_WORKER_TTL_S: '5' })).toThrow(/PAPRIKA_WORKER_TTL_S/);
  });

  it('takes long ages and retentions (ten years at most) and timer periods up to Node\'s longest timer', () => {
    const c = loadConfig({ PAPRIKA_ASSET_RETENTION_S: String(365 * 86400), PAPRIKA_RECONCILE_INTERVAL_S: '2147483', PAPRIKA_HEARTBEAT_S: '1e-3', PAPRIKA_WORKER_TTL_S: '.5' });
    expect([c.assetRetentionS, c.reconcileIntervalS, c.heartbeatS, c.workerTtlS]).toEqual([365 * 86400, 2147483, 0.001, 0.5]);
  });

  it('reads the egress rule lists; an unset or empty ALLOW is null', () => {
    const c = loadConfig({ PAPRIKA_URL_DENY: ' 10.0.0.0/8 , *:6379', PAPRIKA_URL_ALLOW: 'example.org' });
    expect([c.urlDeny, c.urlAllow]).toEqual([['10.0.0.0/8', '*:6379'], ['example.org']]);
    expect([loadConfig({}).urlDeny, loadConfig({}).urlAllow, loadConfig({ PAPRIKA_URL_ALLOW: '' }).urlAllow]).toEqual([[], null, null]);
  });
});
