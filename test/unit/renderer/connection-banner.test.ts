import { describe, expect, it } from 'vitest';
import { bannerFor, initialLink, linkFailed, linkOk, silentAfterMs, socketChanged } from '../../../renderer/src/model/connection-state.ts';

const QUIET = 10_000;

describe('connection banner', () => {
  it('says "connecting" until the first answer, then nothing while the socket is live', () => {
    expect(bannerFor(initialLink, 0, QUIET).kind).toBe('connecting');
    const s = linkOk(socketChanged(initialLink, 'open', 100), 150, false);
    expect(bannerFor(s, 1000, QUIET)).toEqual({ kind: 'none', since: null, detail: null });
  });

  it('shows "lost" since the first failure, and keeps that time across later failures', () => {
    let s = linkOk(socketChanged(initialLink, 'open', 0), 0, false);
    s = socketChanged(s, 'closed', 1000);
    s = linkFailed(s, 2000, 'hub unreachable');
    s = linkFailed(s, 5000, 'hub unreachable');
    expect(bannerFor(s, 6000, QUIET)).toMatchObject({ kind: 'lost', since: 2000, detail: 'hub unreachable' });
  });

  it('clears "lost" at the next answer and shows polling since the socket went down', () => {
    let s = linkOk(socketChanged(initialLink, 'open', 0), 0, false);
    s = socketChanged(s, 'closed', 1000);
    s = linkFailed(s, 2000, 'x');
    s = socketChanged(s, 'connecting', 2500); // reconnect attempt keeps the polling start
    s = linkOk(s, 3000, false);
    expect(bannerFor(s, 3500, QUIET)).toMatchObject({ kind: 'polling', since: 1000 });
    s = socketChanged(s, 'open', 4000);
    expect(bannerFor(linkOk(s, 4000), 4100, QUIET).kind).toBe('none');
  });

  it('treats a quiet open socket as lost since the last update', () => {
    const s = linkOk(socketChanged(initialLink, 'open', 0), 1000, false);
    expect(bannerFor(s, 1000 + QUIET, QUIET).kind).toBe('none');
    expect(bannerFor(s, 1001 + QUIET, QUIET)).toMatchObject({ kind: 'lost', since: 1000 });
  });

  it('shows "stale" from the first stale answer while the hub serves its last good view', () => {
    let s = linkOk(socketChanged(initialLink, 'open', 0), 100, false);
    s = linkOk(s, 200, true);
    s = linkOk(s, 300, true);
    expect(bannerFor(s, 400, QUIET)).toMatchObject({ kind: 'stale', since: 200 });
    s = linkOk(s, 500, false);
    expect(bannerFor(s, 600, QUIET).kind).toBe('none');
    expect(s.hubStaleSince).toBeNull();
  });

  it('job deltas (no stale flag) keep the stale state as it was', () => {
    const s = linkOk(linkOk(socketChanged(initialLink, 'open', 0), 100, true), 200);
    expect(s.hubStale).toBe(true);
    expect(s.hubStaleSince).toBe(100);
  });

  it('asks for a token on 401, above every other banner', () => {
    const s = linkFailed(linkOk(initialLink, 0, true), 10, 'unauthorized', true);
    expect(bannerFor(s, 20, QUIET).kind).toBe('auth');
    expect(linkOk(s, 30).authRequired).toBe(false);
  });

  it('waits at least 10 s, or three snapshots, before calling an open link quiet', () => {
    expect(silentAfterMs(0.2)).toBe(10_000);
    expect(silentAfterMs(15)).toBe(15_000);
    expect(silentAfterMs(undefined)).toBe(15_000);
  });
});
