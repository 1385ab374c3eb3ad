import { describe, expect, it } from 'vitest';
import { newViewKey, signViewToken, verifyViewToken, viewOriginAllowed, withViewToken, type ViewTokenPayload } from '../../../hub-core/src/wire/view-token.ts';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const key = newViewKey();
const payload: ViewTokenPayload = { worker_id: 'w01', lane: 0, exp: 10_000, scope: 'view' };
const expect0 = { workerId: 'w01', lane: 0, nowMs: 5_000 };

describe('live-view tokens', () => {
  it('accepts a token signed with the link key for its worker and lane before it expires', () => {
    const check = verifyViewToken(signViewToken(payload, key), key, expect0);
    expect(check).toEqual({ ok: true, payload });
  });

  it.each([
    ['no token', () => verifyViewToken(undefined, key, expect0), 'missing'],
    ['no key yet (not welcomed)', () => verifyViewToken(signViewToken(payload, key), undefined, expect0), 'no_key'],
    ['another link key', () => verifyViewToken(signViewToken(payload, newViewKey()), key, expect0), 'bad_signature'],
    ['a tampered payload', () => {
      const [, sig] = signViewToken(payload, key).split('.');
      const forged = Buffer.from(JSON.stringify({ ...payload, lane: 1 })).toString('base64url');
      return verifyViewToken(`${forged}.${sig}`, key, { ...expect0, lane: 1 });
    }, 'bad_signature'],
    ['a tampered signature', () => {
      const t = signViewToken(payload, key);
      const at = t.length - 10;
      return verifyViewToken(t.slice(0, at) + (t[at] === 'A' ? 'B' : 'A') + t.slice(at + 1), key, expect0);
    }, 'bad_signature'],
    ['another spelling of the same signature (padding bits changed)', () => {
      const t = signViewToken(payload, key);
      const value = B64URL.indexOf(t.at(-1)!);
      const respelled = t.slice(0, -1) + B64URL[value ^ 1];
      expect(Buffer.from(respelled.split('.')[1], 'base64url')).toEqual(Buffer.from(t.split('.')[1], 'base64url'));
      return verifyViewToken(respelled, key, expect0);
    }, 'bad_signature'],
    ['a truncated signature', () => verifyViewToken(signViewToken(payload, key).slice(0, -4), key, expect0), 'bad_signature'],
    ['no dot', () => verifyViewToken('abc', key, expect0), 'malformed'],
    ['two dots', () => verifyViewToken('a.b.c', key, expect0), 'malformed'],
    ['another lane', () => verifyViewToken(signViewToken(payload, key), key, { ...expect0, lane: 1 }), 'wrong_lane'],
    ['another worker', () => verifyViewToken(signViewToken(payload, key), key, { ...expect0, workerId: 'w02' }), 'wrong_worker'],
    ['expiry reached', () => verifyViewToken(signViewToken(payload, key), key, { ...expect0, nowMs: 10_000 }), 'expired'],
    ['another scope, even signed', () => verifyViewToken(signViewToken({ ...payload, scope: 'admin' } as never, key), key, expect0), 'malformed'],
  ])('refuses %s', (_name, run, reason) => {
    expect(run()).toEqual({ ok: false, reason });
  });

  it('lets a valid token be used without an Origin, from the view server itself, or from the origin it was issued to', () => {
    const own = ['http://10.0.0.5:4100'];
    expect(viewOriginAllowed(undefined, payload, own)).toBe(true);
    expect(viewOriginAllowed('http://10.0.0.5:4100', payload, own)).toBe(true);
    expect(viewOriginAllowed('http://hub:8080', { ...payload, origin: 'http://hub:8080' }, own)).toBe(true);
    expect(viewOriginAllowed('http://hub:8080', payload, own)).toBe(false);
    expect(viewOriginAllowed('http://job-page.example', { ...payload, origin: 'http://hub:8080' }, own)).toBe(false);
    expect(viewOriginAllowed('null', payload, own)).toBe(false);
  });

  it('adds the token as ?vt= and keeps the rest of the URL', () => {
    expect(withViewToken('http://10.0.0.5:4100/lanes/0/view', 'a.b')).toBe('http://10.0.0.5:4100/lanes/0/view?vt=a.b');
    expect(withViewToken('http://novnc:6080/lanes/1?x=1', 'a.b')).toBe('http://novnc:6080/lanes/1?x=1&vt=a.b');
  });
});
