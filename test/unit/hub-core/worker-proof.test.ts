// The link proof (wire/worker-proof.ts) and the registration token bucket, as tables of cases.
import { describe, expect, it } from 'vitest';
import { takeToken, type Bucket } from '../../../hub-core/src/domain/token-bucket.ts';
import { linkProof, proofMatches, secretMatches, secretVerifier } from '../../../hub-core/src/wire/worker-proof.ts';

const SECRET = 'ab'.repeat(32);
const NONCE = '5c'.repeat(32);
const k = secretVerifier(SECRET);

describe('link proof', () => {
  it('stores a verifier, not the secret: 64 hex digits that differ from it', () => {
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(k).not.toBe(SECRET);
  });

  it('accepts the proof the worker computes from its secret', () => {
    expect(proofMatches(k, NONCE, 'w50150', linkProof(secretVerifier(SECRET), NONCE, 'w50150'))).toBe(true);
  });

  it.each([
    ['another secret', linkProof(secretVerifier('cd'.repeat(32)), NONCE, 'w50150')],
    ['another nonce (a replayed proof)', linkProof(k, 'e1'.repeat(32), 'w50150')],
    ['another worker id', linkProof(k, NONCE, 'w50151')],
    ['no proof', undefined],
    ['not hex', 'z'.repeat(64)],
    ['too short', linkProof(k, NONCE, 'w50150').slice(0, 62)],
    ['upper-case hex', linkProof(k, NONCE, 'w50150').toUpperCase()],
  ])('refuses %s', (_what, proof) => {
    expect(proofMatches(k, NONCE, 'w50150', proof)).toBe(false);
  });

  it('takes only 64-hex nonces, so nonce+id has one reading', () => {
    const shortNonce = NONCE.slice(0, 63);
    expect(proofMatches(k, shortNonce, `${NONCE.slice(63)}w1`, linkProof(k, NONCE, 'w1'))).toBe(false);
    expect(proofMatches(k, NONCE, 'w1', linkProof(k, NONCE, 'w1'))).toBe(true);
  });

  it('checks a re-registration secret against the verifier', () => {
    expect(secretMatches(k, SECRET)).toBe(true);
    expect(secretMatches(k, 'cd'.repeat(32))).toBe(false);
    expect(secretMatches(k, undefined)).toBe(false);
    expect(secretMatches('not a verifier', SECRET)).toBe(false);
  });
});

describe('registration token bucket', () => {
  const limit = { ratePerMin: 10, burst: 20 };

  it('lets a burst through, then refuses with the wait until the next token', () => {
    let b: Bucket | undefined;
    const oks: boolean[] = [];
    let retryAfterMs = 0;
    for (let i = 0; i < 25; i++) {
      const t = takeToken(b, 1000, limit);
      b = t.bucket;
      oks.push(t.ok);
      if (!t.ok) retryAfterMs = t.retryAfterMs;
    }
    expect(oks.filter(Boolean)).toHaveLength(20);
    expect(oks.slice(20)).toEqual([false, false, false, false, false]);
    expect(retryAfterMs).toBe(6000);
  });

  it.each([
    [5_999, false],
    [6_000, true],
    [600_000, true],
  ])('refills at the rate: %i ms after an empty bucket → %s', (elapsed, ok) => {
    expect(takeToken({ tokens: 0, at: 0 }, elapsed, limit).ok).toBe(ok);
  });

  it('never holds more than the burst', () => {
    expect(takeToken({ tokens: 0, at: 0 }, 10 * 3600_000, limit).bucket.tokens).toBe(19);
  });
});
