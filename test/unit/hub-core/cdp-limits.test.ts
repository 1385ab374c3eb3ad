// A CDP client's limits: the hub's PAPRIKA_CDP_IDLE_S / PAPRIKA_CDP_MAX_S, or less when the client
// asks (?idle_s=, ?max_s=), never more; anything but a positive number is a 400.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../hub-core/src/config.ts';
import { CdpService } from '../../../hub-core/src/hub/cdp-service.ts';
import { PaprikaError } from '../../../hub-core/src/wire/errors.ts';

const service = new CdpService({ config: loadConfig({ PAPRIKA_CDP_IDLE_S: '300', PAPRIKA_CDP_MAX_S: '3600' }) } as never);

describe('CDP client limits', () => {
  it.each([
    [{}, { idleS: 300, maxS: 3600 }],
    [{ idle_s: '10' }, { idleS: 10, maxS: 3600 }],
    [{ max_s: '0.5', idle_s: '0.25' }, { idleS: 0.25, maxS: 0.5 }],
    [{ idle_s: '100000', max_s: '99999999' }, { idleS: 300, maxS: 3600 }],
  ])('%j → %j', (query, limits) => {
    expect(service.limits(query)).toEqual(limits);
  });

  it.each([{ idle_s: '0' }, { idle_s: '-1' }, { max_s: 'abc' }, { max_s: '1e9' }, { idle_s: ['1', '2'] }, { max_s: '' }, { idle_s: 'Infinity' }])('refuses %j with 400', (query) => {
    let err: unknown;
    try {
      service.limits(query);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PaprikaError);
    expect((err as PaprikaError).status).toBe(400);
  });
});
