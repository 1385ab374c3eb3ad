// `--shared-chrome` and PAPRIKA_SHARED_CHROME: parsed, checked against the flags it excludes,
// and read once in the worker's config.
import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../../worker-agent/src/agent-config.ts';
import { parseWorkerFlags, UsageError, WORKER_USAGE } from '../../../worker-agent/src/main.ts';

const HUB = ['--hub', 'http://127.0.0.1:1', '--lan-ip', '10.0.0.5'];

describe('the shared-Chrome worker mode', () => {
  it('is off by default and on with --shared-chrome', () => {
    expect(parseWorkerFlags(HUB).sharedChrome).toBe(false);
    expect(parseWorkerFlags([...HUB, '--shared-chrome', '--lanes', '4'])).toMatchObject({ sharedChrome: true, lanes: 4, singleChrome: false });
    expect(WORKER_USAGE).toContain('--shared-chrome');
  });

  it('refuses --shared-chrome with --single-chrome or --simulate-lanes', () => {
    expect(() => parseWorkerFlags([...HUB, '--shared-chrome', '--single-chrome'])).toThrow(UsageError);
    expect(() => parseWorkerFlags([...HUB, '--shared-chrome', '--simulate-lanes', '2'])).toThrow(UsageError);
  });

  it('PAPRIKA_SHARED_CHROME=1 turns it on; anything but 1/0/true/false is a config error', () => {
    expect(loadAgentConfig({}).sharedChrome).toBe(false);
    expect(loadAgentConfig({ PAPRIKA_SHARED_CHROME: '1' }).sharedChrome).toBe(true);
    expect(loadAgentConfig({ PAPRIKA_SHARED_CHROME: '0' }).sharedChrome).toBe(false);
    expect(() => loadAgentConfig({ PAPRIKA_SHARED_CHROME: 'yes' })).toThrow(/PAPRIKA_SHARED_CHROME/);
  });
});
