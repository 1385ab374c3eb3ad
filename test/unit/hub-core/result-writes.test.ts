// ResultWrites on its own, with a fake pair of statements: how results arriving together are cut
// into statements (rows and bytes), and which failures are retried row by row (anything but a
// lost connection) so that one result never costs the others theirs.
import { describe, expect, it } from 'vitest';
import { databaseUnavailable } from '../../../hub-core/src/ports/database-errors.ts';
import { ResultWrites, roughBytes, type ResultStatements } from '../../../hub-core/src/hub/result-writes.ts';
import type { Finish, JobRow } from '../../../hub-core/src/ports/job-store.ts';

const finish = (result: unknown): Finish => ({ assignmentId: 'a', workerId: 'w', status: 'succeeded', result, error: null, now: new Date(0) });
const row = (id: string) => ({ id, status: 'succeeded' }) as JobRow;

function fake(manyFails?: () => unknown) {
  const calls: string[][] = [];
  const store: ResultStatements = {
    one: async (id) => {
      calls.push([id]);
      return row(id);
    },
    many: async (fs) => {
      calls.push(fs.map((f) => f.id));
      const err = manyFails?.();
      if (err) throw err;
      return fs.map((f) => row(f.id));
    },
  };
  return { store, calls };
}

describe('ResultWrites', () => {
  it('cuts a turn’s results into statements of at most maxBytes (a larger one alone), every caller answered', async () => {
    const { store, calls } = fake();
    const w = new ResultWrites(store, { maxBatch: 100, maxBytes: 1000, maxInFlight: 1 });
    const big = 'x'.repeat(600);
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const rows = await Promise.all(ids.map((id, i) => w.write(id, finish(i === 2 ? { html: 'y'.repeat(5000) } : { html: big }))));
    expect(rows.map((r) => r?.id)).toEqual(ids);
    expect(calls).toEqual([['a'], ['b'], ['c'], ['d'], ['e']]);
    const small = fake();
    const w2 = new ResultWrites(small.store, { maxBatch: 100, maxBytes: 1000, maxInFlight: 1 });
    await Promise.all(['a', 'b', 'c'].map((id) => w2.write(id, finish({ title: 'short' }))));
    expect(small.calls).toEqual([['a', 'b', 'c']]);
  });

  it('a batch the client cannot even send (no SQLSTATE, e.g. a RangeError) is written row by row', async () => {
    const { store, calls } = fake(() => new RangeError('Invalid string length'));
    const w = new ResultWrites(store, { maxBatch: 100, maxBytes: 1 << 20, maxInFlight: 1 });
    const rows = await Promise.all(['a', 'b'].map((id) => w.write(id, finish({ ok: true }))));
    expect(rows.map((r) => r?.id)).toEqual(['a', 'b']);
    expect(calls).toEqual([['a', 'b'], ['a'], ['b']]);
  });

  it('a lost connection fails every caller of the batch, without a row-by-row retry', async () => {
    const { store, calls } = fake(() => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    const w = new ResultWrites(store, { maxBatch: 100, maxBytes: 1 << 20, maxInFlight: 1 });
    const out = await Promise.all(['a', 'b'].map((id) => w.write(id, finish(null)).catch((e: Error) => e.message)));
    expect(out).toEqual(['connect ECONNREFUSED 127.0.0.1:5432', 'connect ECONNREFUSED 127.0.0.1:5432']);
    expect(calls).toEqual([['a', 'b']]);
  });

  it('tells a database that cannot be reached from a refusal of the statement (one predicate for the result writer and the HTTP 503)', () => {
    const coded = (code: string) => Object.assign(new Error('x'), { code });
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', '08006', '08001', '57P01', '57P03', '3D000', '55000']) expect({ code, down: databaseUnavailable(coded(code)) }).toEqual({ code, down: true });
    for (const message of ['Connection terminated unexpectedly', 'timeout exceeded when trying to connect', 'Query read timeout', 'the database system is starting up', 'Client has encountered a connection error and is not queryable']) expect({ message, down: databaseUnavailable(new Error(message)) }).toEqual({ message, down: true });
    for (const code of ['22P05', '54000', '23505', '42P01']) expect({ code, down: databaseUnavailable(coded(code)) }).toEqual({ code, down: false }); // the data, its size, a key, the schema
    expect(databaseUnavailable(new RangeError('Invalid string length'))).toBe(false);
    expect(databaseUnavailable(null)).toBe(false);
  });

  it('counts a result’s text roughly and stops counting past the limit', () => {
    expect(roughBytes({ a: 'xyz', b: [1, 'qq'] }, 1000)).toBeGreaterThanOrEqual(9);
    expect(roughBytes('x'.repeat(10), 1000)).toBe(12);
    const huge = Array.from({ length: 20_000 }, () => 'x'.repeat(100));
    expect(roughBytes(huge, 1000)).toBeLessThan(1200);
  });
});
