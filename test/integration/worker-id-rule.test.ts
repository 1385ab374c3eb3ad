// One table, three implementations of the worker-id rule: the pure decider (workerIdFor), the
// memory registry (which calls it) and the Lua script on a real Redis. Each row: the ids already
// held (by which IP), then who asks (and for which ids, when the worker named one) → the id it gets.
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryRegistry } from '../../hub-core/src/adapters/memory/memory-registry.ts';
import { RedisRegistry } from '../../hub-core/src/adapters/redis/redis-registry.ts';
import { workerIdFor } from '../../hub-core/src/domain/worker-id.ts';
import { ManualClock } from '../../hub-core/src/ports/clock.ts';
import type { Registry } from '../../hub-core/src/ports/registry.ts';
import { dropRedisPrefix, REDIS_TEST_URL, requireServices, testRedisPrefix } from '../harness/services.ts';

interface Row {
  name: string;
  held: Record<string, string>;
  ip: string;
  candidates?: string[];
  /** The id it gets, or null: none left (every candidate held by another IP). */
  want: string | null;
}

const TABLE: Row[] = [
  { name: 'a free short id', held: {}, ip: '10.10.50.150', want: 'w50150' },
  { name: 'the same IP again', held: { w50150: '10.10.50.150' }, ip: '10.10.50.150', want: 'w50150' },
  { name: 'a short id held in the same /16 (octets joined without separator)', held: { w5150: '10.10.5.150' }, ip: '10.10.51.50', want: 'w10-10-51-50' },
  { name: 'a short id held in another /16', held: { w5150: '10.10.5.150' }, ip: '10.20.5.150', want: 'w10-20-5-150' },
  { name: 'the long id it already holds', held: { w5150: '10.10.5.150', 'w10-10-51-50': '10.10.51.50' }, ip: '10.10.51.50', want: 'w10-10-51-50' },
  { name: 'both ids held by others', held: { w5150: '10.10.5.150', 'w10-20-5-150': '10.20.5.151' }, ip: '10.20.5.150', want: null },
  { name: 'a named id, free', held: { w5150: '10.10.5.150' }, ip: '10.10.5.150', candidates: ['build-box'], want: 'build-box' },
  { name: 'a named id this IP holds', held: { 'build-box': '10.0.0.9' }, ip: '10.0.0.9', candidates: ['build-box'], want: 'build-box' },
  { name: 'a named id another IP holds', held: { 'build-box': '10.0.0.8' }, ip: '10.0.0.9', candidates: ['build-box'], want: null },
];

/** Each row in its own registry namespace: the holders claim their ids first, then the asker. */
async function claimOn(reg: Registry, row: Row): Promise<string | null> {
  for (const [id, ip] of Object.entries(row.held)) expect(await reg.claimWorkerId(ip, 'holder', [id])).toBe(id);
  return reg.claimWorkerId(row.ip, 'asker', row.candidates).then(
    (id) => id,
    (err: Error) => {
      expect(err.message).toMatch(/no worker id left/);
      return null;
    },
  );
}

describe('the worker-id rule, one table', () => {
  it.each(TABLE)('decider: $name', (row) => {
    const held = new Map(Object.entries(row.held));
    const got = (() => {
      try {
        return workerIdFor(row.ip, (id) => held.get(id), row.candidates);
      } catch (err) {
        expect((err as Error).message).toMatch(/no worker id left/);
        return null;
      }
    })();
    expect(got).toBe(row.want);
  });

  it.each(TABLE)('memory registry: $name', async (row) => {
    const reg = new MemoryRegistry(new ManualClock(0));
    expect(await claimOn(reg, row)).toBe(row.want);
    await reg.close();
  });

  describe.skipIf(!requireServices(['redis']))('Lua on Redis', () => {
    const prefixes: string[] = [];
    const regs: Registry[] = [];
    afterAll(async () => {
      await Promise.all(regs.map((r) => r.close()));
      await Promise.all(prefixes.map((p) => dropRedisPrefix(p)));
    });
    it.each(TABLE)('redis registry: $name', async (row) => {
      const prefix = testRedisPrefix();
      prefixes.push(prefix);
      const reg = await RedisRegistry.connect(REDIS_TEST_URL, prefix, 120);
      regs.push(reg);
      expect(await claimOn(reg, row)).toBe(row.want);
    });
  });
});
