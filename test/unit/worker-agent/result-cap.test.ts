// The worker's result cap (PAPRIKA_MAX_RESULT_BYTES): inline values over 256 KB move to the
// asset result.json, and a result still over the cap becomes `failed: result too large`
// naming its largest part.
import { describe, expect, it } from 'vitest';
import { capResult, capSessionReply, frameSize, INLINE_RESULT_MAX_BYTES } from '../../../worker-agent/src/result-cap.ts';
import { boundedError, encode, MAX_ASSETS, MAX_ERROR_CHARS, parseWorkerMessage } from '../../../hub-core/src/wire/protocol.ts';
import { MAX_MACRO_STEPS } from '../../../hub-core/src/wire/job-spec.ts';

const base = { type: 'job_result' as const, job_id: 'j', assignment_id: 'a', status: 'succeeded' as const };
const png = (bytes: number) => ({ name: 'shot.png', content_type: 'image/png', data_base64: Buffer.alloc(bytes).toString('base64') });

describe('capResult', () => {
  it('leaves a small result alone', () => {
    const r = { ...base, result: { title: 'ok' }, assets: [png(1000)] };
    expect(capResult(r, 1024 * 1024)).toBe(r);
  });

  it('moves an inline value over 256 KB to result.json and keeps a pointer', () => {
    const value = { text: 'x'.repeat(INLINE_RESULT_MAX_BYTES) };
    const out = capResult({ ...base, result: value }, 8 * 1024 * 1024);
    const bytes = Buffer.byteLength(JSON.stringify(value));
    expect(out).toMatchObject({ status: 'succeeded', result: { result_asset: 'result.json', bytes } });
    const asset = out.assets!.find((a) => a.name === 'result.json')!;
    expect(JSON.parse(Buffer.from(asset.data_base64, 'base64').toString('utf8'))).toEqual(value);
  });

  it('takes a screenshot for every step of the longest macro, its failure.png and result.json; fails a result with more', () => {
    const shots = (n: number) => Array.from({ length: n }, (_, i) => ({ ...png(10), name: `s-${i}.png` }));
    const longest = { ...base, result: { ok: true }, assets: [...shots(MAX_MACRO_STEPS), { ...png(10), name: 'failure.png' }, { ...png(10), name: 'result.json' }] };
    expect(capResult(longest, 8 * 1024 * 1024)).toBe(longest);
    expect(parseWorkerMessage(encode(longest)).ok).toBe(true);
    const more = { ...base, result: { ok: true }, assets: shots(MAX_ASSETS + 1) };
    expect(parseWorkerMessage(encode(more)).ok).toBe(false);
    const out = capResult(more, 8 * 1024 * 1024);
    expect(out).toEqual({ ...base, status: 'failed', error: `result has ${MAX_ASSETS + 1} assets, over the limit of ${MAX_ASSETS}` });
    expect(parseWorkerMessage(encode(out)).ok).toBe(true);
  });

  it('never throws: a result that cannot be serialised becomes a failure naming why (one once crashed the agent)', () => {
    const out = capResult({ ...base, result: { n: 1n } }, 8 * 1024 * 1024);
    expect(out).toEqual({ ...base, status: 'failed', error: expect.stringMatching(/^result cannot be serialised \(.*BigInt.*\): return less$/) });
    expect(capSessionReply({ type: 'session_reply', request_id: 'r', ok: true, result: { n: 1n } }, 1024)).toEqual({ type: 'session_reply', request_id: 'r', ok: false, error: expect.stringMatching(/^result cannot be serialised/) });
  });

  it('fails a result over the cap, naming the screenshot, with no value or assets', () => {
    const out = capResult({ ...base, result: { ok: true }, assets: [png(3 * 1024 * 1024)] }, 2 * 1024 * 1024);
    expect(out).toEqual({ ...base, status: 'failed', error: expect.stringMatching(/^result too large: 4\.0 MB is over PAPRIKA_MAX_RESULT_BYTES \(2\.0 MB\); its largest part is shot\.png \(3\.0 MB\): take a smaller screenshot/) });
    expect(frameSize(out)).toBeLessThan(1000);
  });
});

describe('error text on the link', () => {
  it('cuts an error past MAX_ERROR_CHARS, saying so, so the hub accepts the result instead of refusing it forever', () => {
    const long = { ...base, status: 'failed' as const, error: 'x'.repeat(50_000) };
    expect(parseWorkerMessage(encode(long)).ok).toBe(false); // what the worker sent before: never stored
    const out = capResult(long, 8 * 1024 * 1024);
    expect(out.error!.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    expect(out.error).toMatch(/^x+ … \(\d+ characters cut\)$/);
    expect(parseWorkerMessage(encode(out)).ok).toBe(true);
  });

  it('leaves an error of exactly MAX_ERROR_CHARS as it is', () => {
    const text = 'y'.repeat(MAX_ERROR_CHARS);
    expect(boundedError(text)).toBe(text);
    expect(boundedError(text + 'z')).toMatch(/ \(\d+ characters cut\)$/);
  });
});
