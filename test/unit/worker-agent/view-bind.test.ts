import { describe, expect, it } from 'vitest';
import { parseWorkerFlags, UsageError } from '../../../worker-agent/src/main.ts';
import { planViewBind } from '../../../worker-agent/src/live-view/view-bind.ts';

describe('live-view bind address', () => {
  it('listens on the LAN address, falling back to loopback (never a wildcard) when the host does not own it', () => {
    expect(planViewBind('10.0.0.5')).toEqual({ first: { host: '10.0.0.5', publicHost: '10.0.0.5' }, fallback: { host: '127.0.0.1', publicHost: '127.0.0.1' } });
    expect(planViewBind('127.0.31.1')).toEqual({ first: { host: '127.0.31.1', publicHost: '127.0.31.1' }, fallback: undefined });
  });

  it('listens where --view-bind says, advertising the LAN address unless the bind is loopback', () => {
    expect(planViewBind('203.0.113.7', '0.0.0.0')).toEqual({ first: { host: '0.0.0.0', publicHost: '203.0.113.7' } });
    expect(planViewBind('203.0.113.7', '::')).toEqual({ first: { host: '::', publicHost: '203.0.113.7' } });
    expect(planViewBind('203.0.113.7', '127.0.0.1')).toEqual({ first: { host: '127.0.0.1', publicHost: '127.0.0.1' } });
  });

  it('reads --view-bind as an IP address and refuses anything else', () => {
    expect(parseWorkerFlags(['--hub', 'http://127.0.0.1:1', '--lan-ip', '10.0.0.5', '--view-bind', '0.0.0.0']).viewBind).toBe('0.0.0.0');
    expect(parseWorkerFlags(['--hub', 'http://127.0.0.1:1', '--lan-ip', '10.0.0.5']).viewBind).toBeUndefined();
    expect(() => parseWorkerFlags(['--hub', 'http://127.0.0.1:1', '--view-bind', 'everywhere'])).toThrow(UsageError);
    expect(parseWorkerFlags(['--hub', 'http://127.0.0.1:1', '--view-port', '7900']).viewPort).toBe(7900);
    for (const bad of ['0', '70000', 'x', '', '0x1f40']) expect(() => parseWorkerFlags(['--hub', 'http://127.0.0.1:1', '--view-port', bad])).toThrow(/--view-port expects a port number/);
  });
});
