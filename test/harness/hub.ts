// Start a hub for a test: embedded (in-memory PGlite + in-process registry) by default, or on
// the real Postgres and Redis with a database and key prefix of its own.
import pino, { type Logger } from 'pino';
import { openJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { loadConfig } from '../../hub-core/src/config.ts';
import { startHub, type Hub } from '../../hub-core/src/app/hub.ts';
import type { Clock } from '../../hub-core/src/ports/clock.ts';
import type { JobStore } from '../../hub-core/src/ports/job-store.ts';
import { assertTestRedisPrefix, createTestDatabase, dropRedisPrefix, REDIS_TEST_URL, testRedisPrefix, uniqueName } from './services.ts';

export interface TestHub {
  hub: Hub;
  url: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Fast defaults for tests: short waits, no Chrome; override any PAPRIKA_* through env. */
export const FAST_ENV: Record<string, string> = {
  PAPRIKA_PORT: '0',
  PAPRIKA_ASSIGN_WAIT_S: '1',
  PAPRIKA_LOG_LEVEL: process.env.PAPRIKA_TEST_LOG_LEVEL ?? 'silent',
  // Tests enroll many workers from 127.0.0.1 at once; the rate-limit test sets its own.
  PAPRIKA_REGISTER_BURST: '500',
};

export async function startTestHub(env: Record<string, string> = {}, opts: { store?: JobStore; clock?: Clock; hostClock?: Clock; logger?: Logger } = {}): Promise<TestHub> {
  const full = { ...FAST_ENV, PAPRIKA_HUB_ID: uniqueName('hub'), ...env };
  assertTestRedisPrefix(full);
  const config = loadConfig(full);
  let ownStore: JobStore | undefined;
  const store = opts.store ?? (config.databaseUrl ? undefined : (ownStore = await openJobStore({})));
  const hub = await startHub({ env: full, store, clock: opts.clock, hostClock: opts.hostClock, logger: opts.logger ?? pino({ level: config.logLevel, base: { hub: config.hubId } }) });
  return {
    hub,
    url: hub.url,
    env: full,
    async stop() {
      await hub.stop();
      await ownStore?.close();
    },
  };
}

/**
 * A database and a Redis prefix shared by the hubs of one test. drop() removes both: call it
 * after every hub on them has stopped (a live hub would write its keys again).
 */
export async function realBackends(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  return {
    env: { DATABASE_URL: db.url, REDIS_URL: REDIS_TEST_URL, PAPRIKA_REDIS_PREFIX: prefix },
    async drop() {
      await Promise.all([db.drop(), dropRedisPrefix(prefix)]);
    },
  };
}
