// decideRepeat: the same request again is a retry; a different one under the same key is
// refused; a key past its retention window is forgotten.
import { describe, expect, it } from 'vitest';
import { canonicalJson, decideRepeat } from '../../../hub-core/src/domain/idempotency.ts';

const DAY_S = 86_400;
const created = new Date('2026-12-01T00:00:00Z');
const job = { kind: 'fetch', spec: { url: 'http://127.0.0.1/a', screenshot: true, timeout_s: 30 }, created_at: created };

describe('decideRepeat', () => {
  it.each([
    ['the same request (keys in another order)', { kind: 'fetch', spec: { timeout_s: 30, screenshot: true, url: 'http://127.0.0.1/a' } }, 1000, 'same_request'],
    ['another url', { kind: 'fetch', spec: { url: 'http://127.0.0.1/b', screenshot: true, timeout_s: 30 } }, 1000, 'different_request'],
    ['another kind', { kind: 'macro', spec: job.spec }, 1000, 'different_request'],
    ['one field fewer', { kind: 'fetch', spec: { url: 'http://127.0.0.1/a', screenshot: true } }, 1000, 'different_request'],
    ['a nested difference', { kind: 'fetch', spec: { ...job.spec, extra: [1, { a: 2 }] } }, 1000, 'different_request'],
    ['a different request past the window', { kind: 'fetch', spec: { url: 'http://127.0.0.1/b' } }, DAY_S * 1000, 'expired'],
    ['the same request past the window', { kind: 'fetch', spec: job.spec }, DAY_S * 1000 + 1, 'expired'],
    ['the same request just inside the window', { kind: 'fetch', spec: job.spec }, DAY_S * 1000 - 1, 'same_request'],
  ])('%s', (_name, request, ageMs, verdict) => {
    expect(decideRepeat(job, request, created.getTime() + ageMs, DAY_S)).toBe(verdict);
  });

  it('canonicalJson sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson([{ b: 1, a: 2 }])).toBe('[{"a":2,"b":1}]');
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });
});
