import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadAgentConfig } from '../../../worker-agent/src/agent-config.ts';

describe('loadAgentConfig', () => {
  it('defaults to 100 jobs, 1024 MiB and an 8 MB result cap', () => {
    expect(loadAgentConfig({})).toMatchObject({ laneRecycleJobs: 100, laneMaxRssMb: 1024, maxResultBytes: 8 * 1024 * 1024, cdpMaxDiskMb: 1024 });
    expect(loadAgentConfig({ PAPRIKA_CDP_MAX_DISK_MB: '64' }).cdpMaxDiskMb).toBe(64);
    expect(() => loadAgentConfig({ PAPRIKA_CDP_MAX_DISK_MB: 'lots' })).toThrow(/PAPRIKA_CDP_MAX_DISK_MB/);
    expect(loadAgentConfig({ PAPRIKA_LANE_RECYCLE_JOBS: ' 3 ', PAPRIKA_LANE_MAX_RSS_MB: '512', PAPRIKA_MAX_RESULT_BYTES: '1000' })).toMatchObject({ laneRecycleJobs: 3, laneMaxRssMb: 512, maxResultBytes: 1000 });
  });

  it('refuses a result cap above the link frame limit (32 MB)', () => {
    expect(() => loadAgentConfig({ PAPRIKA_MAX_RESULT_BYTES: String(33 * 1024 * 1024) })).toThrow(/^PAPRIKA_MAX_RESULT_BYTES: at most 33554432/);
  });

  it.each([
    ['PAPRIKA_LANE_RECYCLE_JOBS', '0'],
    ['PAPRIKA_LANE_RECYCLE_JOBS', '2.5'],
    ['PAPRIKA_LANE_MAX_RSS_MB', 'lots'],
    ['PAPRIKA_LANE_MAX_RSS_MB', '-1'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadAgentConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadAgentConfig({ [name]: value })).toThrow(new RegExp(`^${name}: expected a whole number`));
  });

  it("has the hub's defaults for the variables both read, and checks them the same way", () => {
    const c = loadAgentConfig({});
    expect(Object.keys(c).sort()).toEqual(['cdpMaxDiskMb', 'chromePath', 'dataDir', 'diskMaxPct', 'heartbeatS', 'laneMaxRssMb', 'laneRecycleJobs', 'logLevel', 'maxResultBytes', 'sharedChrome', 'workerToken']);
    expect(c).toMatchObject({ logLevel: 'info', chromePath: undefined, workerToken: undefined, heartbeatS: 15, diskMaxPct: 90 });
    expect(c.dataDir).toBe(path.resolve('.paprika'));
    expect(Object.isFrozen(c)).toBe(true);
    expect(loadAgentConfig({ PAPRIKA_WORKER_TOKEN: 'w', PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_DISK_MAX_PCT: '80', PAPRIKA_CHROME_PATH: '/c', PAPRIKA_LOG_LEVEL: 'warn' })).toMatchObject({ workerToken: 'w', heartbeatS: 0.5, diskMaxPct: 80, chromePath: '/c', logLevel: 'warn' });
    expect(() => loadAgentConfig({ PAPRIKA_HEARTBEAT_S: '0' })).toThrow(/^PAPRIKA_HEARTBEAT_S: must be greater than 0/);
    expect(() => loadAgentConfig({ PAPRIKA_DISK_MAX_PCT: '101' })).toThrow(/^PAPRIKA_DISK_MAX_PCT: must be at most 100/);
    expect(() => loadAgentConfig({ PAPRIKA_LOG_LEVEL: 'loud' })).toThrow(ConfigError);
  });

  it("ignores the hub's variables, even malformed ones that stop a hub", () => {
    const hubOnly = { DATABASE_URL: 'mysql://x', REDIS_URL: 'not a url', PAPRIKA_URL_DENY: '10.0.0.0/40', PAPRIKA_BIND: '0.0.0.0', PAPRIKA_PORT: 'abc', PAPRIKA_WORKER_TTL_S: '1' };
    expect(loadAgentConfig(hubOnly)).toEqual(loadAgentConfig({}));
  });
});
