import { describe, expect, it } from 'vitest';
import { encode, parseHubMessage, parseWorkerMessage } from '../../../hub-core/src/wire/protocol.ts';
import { JobRequest } from '../../../hub-core/src/wire/job-spec.ts';

describe('worker link protocol', () => {
  it('round-trips a heartbeat with v: 1 stamped on', () => {
    const text = encode({ type: 'heartbeat', in_flight: 1, cpu_pct: 5, mem_pct: 50, disk_pct: 20, lanes: [] });
    expect(JSON.parse(text).v).toBe(1);
    const parsed = parseWorkerMessage(text);
    expect(parsed.ok && parsed.value.type).toBe('heartbeat');
  });

  it.each([
    ['not JSON', '{nope', /not valid JSON/],
    ['no type', '{"v":1}', /no known type/],
    ['unknown type', '{"type":"dance","v":1}', /no known type|invalid dance/],
    ['wrong version', '{"type":"heartbeat","v":2,"in_flight":0,"cpu_pct":0,"mem_pct":0,"disk_pct":0,"lanes":[]}', /invalid heartbeat/],
    ['unknown field', '{"type":"job_started","v":1,"job_id":"j","assignment_id":"a","lane":0,"evil":1}', /invalid job_started/],
    ['out-of-range percent', '{"type":"heartbeat","v":1,"in_flight":0,"cpu_pct":0,"mem_pct":0,"disk_pct":101,"lanes":[]}', /invalid heartbeat/],
  ])('refuses %s with an error value, never a throw', (_name, raw, message) => {
    const parsed = parseWorkerMessage(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });

  it('reads result_refused with its code, and refuses an unknown code', () => {
    const head = { type: 'result_refused', v: 1, job_id: 'j', reason: 'frame of 40000000 bytes is over the limit' };
    expect(parseHubMessage(JSON.stringify({ ...head, code: 'too_large', max_bytes: 33554432 }))).toMatchObject({ ok: true, value: { code: 'too_large' } });
    expect(parseHubMessage(JSON.stringify({ ...head, code: 'not_stored' })).ok).toBe(true);
    expect(parseHubMessage(JSON.stringify({ ...head, code: 'invalid' })).ok).toBe(true);
    expect(parseHubMessage(JSON.stringify({ ...head, code: 'whatever' })).ok).toBe(false);
  });

  it('refuses a macro value named __proto__ (as a key of `values` it would set the prototype and be lost)', () => {
    const step = (name: string) => ({ kind: 'macro', spec: { steps: [{ op: 'eval', expression: '1', name }] } });
    expect(JobRequest.safeParse(step('__proto__')).success).toBe(false);
    expect(JobRequest.safeParse(step('proto')).success).toBe(true);
    expect(JobRequest.safeParse({ kind: 'macro', spec: { steps: [{ op: 'extract', selector: 'p', name: '__proto__' }] } }).success).toBe(false);
  });

  it('accepts Buffers as the ws library delivers them', () => {
    const parsed = parseHubMessage(Buffer.from(encode({ type: 'cancel', job_id: 'j', reason: 'r' })));
    expect(parsed.ok).toBe(true);
  });

  it('reads an assign as SPEC writes it (kind and spec at the top) and validates the spec by its kind', () => {
    const head = { type: 'assign', v: 1, job_id: 'j', assignment_id: 'a', lane: 0, deadline: 1 };
    const good = parseHubMessage(JSON.stringify({ ...head, kind: 'sleep', spec: { ms: 5 } }));
    expect(good).toMatchObject({ ok: true, value: { kind: 'sleep', spec: { ms: 5 } } });
    expect(parseHubMessage(JSON.stringify({ ...head, kind: 'sleep', spec: { ms: 'x' } })).ok).toBe(false);
    expect(parseHubMessage(JSON.stringify({ ...head, kind: 'fetch', spec: { ms: 5 } })).ok).toBe(false); // a sleep spec under fetch
    expect(parseHubMessage(JSON.stringify({ ...head, job: { kind: 'sleep', spec: { ms: 5 } } })).ok).toBe(false); // the old nested shape
  });

  it('reads welcome with or without the live-view key, and refuses a key too short to be one', () => {
    const head = { type: 'welcome', v: 1, worker_id: 'w1', hub_id: 'h1', heartbeat_s: 15, status: 'active' };
    expect(parseHubMessage(JSON.stringify({ ...head, view_key: 'k'.repeat(43) }))).toMatchObject({ ok: true, value: { view_key: 'k'.repeat(43) } });
    expect(parseHubMessage(JSON.stringify(head)).ok).toBe(true);
    expect(parseHubMessage(JSON.stringify({ ...head, view_key: 'short' })).ok).toBe(false);
  });

  it('carries the additive lane_recycles (heartbeat) and url_policy (welcome) fields, and stays readable without them', () => {
    const hb = parseWorkerMessage(encode({ type: 'heartbeat', in_flight: 0, cpu_pct: 0, mem_pct: 0, disk_pct: 0, lanes: [], lane_recycles: { jobs: 2, rss: 1, crash: 0 } }));
    expect(hb.ok && hb.value.type === 'heartbeat' && hb.value.lane_recycles).toEqual({ jobs: 2, rss: 1, crash: 0 });
    expect(parseWorkerMessage(JSON.stringify({ type: 'heartbeat', v: 1, in_flight: 0, cpu_pct: 0, mem_pct: 0, disk_pct: 0, lanes: [], lane_recycles: { jobs: -1, rss: 0, crash: 0 } })).ok).toBe(false);
    const welcome = { type: 'welcome', v: 1, worker_id: 'w1', hub_id: 'h1', heartbeat_s: 15, status: 'active' };
    expect(parseHubMessage(JSON.stringify(welcome)).ok).toBe(true);
    const withPolicy = parseHubMessage(JSON.stringify({ ...welcome, url_policy: { deny: ['10.0.0.0/8'], allow: null } }));
    expect(withPolicy.ok && withPolicy.value.type === 'welcome' && withPolicy.value.url_policy).toEqual({ deny: ['10.0.0.0/8'], allow: null });
  });
});

describe('wall link messages', () => {
  it('parses thumbs and thumb, and refuses what breaks their limits', () => {
    expect(parseHubMessage({ type: 'thumbs', v: 1, lanes: [0, 3], interval_ms: 1000 }).ok).toBe(true);
    expect(parseHubMessage({ type: 'thumbs', v: 1, lanes: [], interval_ms: 250 }).ok).toBe(true);
    for (const bad of [{ lanes: [1, 1], interval_ms: 1000 }, { lanes: [-1], interval_ms: 1000 }, { lanes: [0], interval_ms: 100 }, { lanes: [0], interval_ms: 20_000 }, { lanes: Array.from({ length: 256 }, (_, i) => i), interval_ms: 1000 }]) {
      expect(parseHubMessage({ type: 'thumbs', v: 1, ...bad }).ok).toBe(false);
    }
    expect(parseWorkerMessage({ type: 'thumb', v: 1, lane: 0, at: 1, jpeg: '/9j/4A==' }).ok).toBe(true);
    expect(parseWorkerMessage({ type: 'thumb', v: 1, lane: 0, at: 1, idle: true }).ok).toBe(true);
    expect(parseWorkerMessage({ type: 'thumb', v: 1, lane: 0, at: 1, jpeg: 'A'.repeat(262_148) }).ok).toBe(false);
    expect(parseWorkerMessage({ type: 'thumb', v: 1, lane: 0, at: 1, jpeg: 'not base64!' }).ok).toBe(false);
    expect(parseWorkerMessage({ type: 'thumb', v: 1, lane: 0, at: 1, idle: false }).ok).toBe(false);
    expect(parseWorkerMessage({ type: 'thumb', v: 1, lane: 0, at: 1, extra: 1 }).ok).toBe(false);
  });
});
