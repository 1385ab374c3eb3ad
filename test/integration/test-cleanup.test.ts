// The harness's clean-up on the real Redis: dropRedisPrefix removes every key under a test
// prefix (over several SCAN batches) and nothing beside it; test hubs on the shared Redis must
// use a test prefix.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertTestRedisPrefix, dropRedisPrefix, REDIS_TEST_URL, requireServices, testRedisPrefix } from '../harness/services.ts';

describe.skipIf(!requireServices(['redis']))('test clean-up on Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_TEST_URL);
  });
  afterAll(() => redis?.disconnect());

  it('dropRedisPrefix deletes every key under the prefix and none under a neighbour', async () => {
    const prefix = testRedisPrefix();
    const neighbour = testRedisPrefix();
    const pipe = redis.pipeline();
    for (let i = 0; i < 2500; i++) pipe.set(`${prefix}k:${i}`, '1');
    pipe.hset(`${prefix}worker:w1`, 'a', '1');
    pipe.set(`${neighbour}k:0`, '1');
    await pipe.exec();
    try {
      expect(await dropRedisPrefix(prefix)).toBe(2501);
      expect((await redis.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 10_000))[1]).toEqual([]);
      expect(await redis.exists(`${neighbour}k:0`)).toBe(1);
    } finally {
      await dropRedisPrefix(prefix);
      await dropRedisPrefix(neighbour);
    }
  });

  it('dropRedisPrefix refuses a prefix that is not a test prefix', async () => {
    await expect(dropRedisPrefix('paprika:')).rejects.toThrow(/not a test prefix/);
  });

  it('a test hub on the shared Redis needs a test prefix; a private server or no Redis does not', () => {
    expect(() => assertTestRedisPrefix({ REDIS_URL: REDIS_TEST_URL })).toThrow(/PAPRIKA_REDIS_PREFIX/);
    expect(() => assertTestRedisPrefix({ REDIS_URL: REDIS_TEST_URL, PAPRIKA_REDIS_PREFIX: 'paprika:' })).toThrow(/PAPRIKA_REDIS_PREFIX/);
    expect(() => assertTestRedisPrefix({ REDIS_URL: REDIS_TEST_URL, PAPRIKA_REDIS_PREFIX: testRedisPrefix() })).not.toThrow();
    expect(() => assertTestRedisPrefix({ REDIS_URL: 'redis://127.0.0.1:1/0' })).not.toThrow();
    expect(() => assertTestRedisPrefix({})).not.toThrow();
  });
});
