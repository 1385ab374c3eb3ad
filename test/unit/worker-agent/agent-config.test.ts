import { describe, expect, it } from 'vitest';
import { AgentConfigError, loadAgentConfig } from '../../../worker-agent/src/agent-config.ts';

describe('loadAgentConfig', () => {
  it('defaults to 100 jobs and 1024 MiB', () => {
    expect(loadAgentConfig({})).toEqual({ laneRecycleJobs: 100, laneMaxRssMb: 1024 });
    expect(loadAgentConfig({ PAPRIKA_LANE_RECYCLE_JOBS: ' 3 ', PAPRIKA_LANE_MAX_RSS_MB: '512' })).toEqual({ laneRecycleJobs: 3, laneMaxRssMb: 512 });
  });

  it.each([
    ['PAPRIKA_LANE_RECYCLE_JOBS', '0'],
    ['PAPRIKA_LANE_RECYCLE_JOBS', '2.5'],
    ['PAPRIKA_LANE_MAX_RSS_MB', 'lots'],
    ['PAPRIKA_LANE_MAX_RSS_MB', '-1'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadAgentConfig({ [name]: value })).toThrow(AgentConfigError);
    expect(() => loadAgentConfig({ [name]: value })).toThrow(new RegExp(`^${name}: expected a whole number`));
  });
});
