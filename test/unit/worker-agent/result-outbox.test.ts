// The worker's result outbox: a result stays until a hub acks it or refuses it for good; it
// is sent again after a re-link and when unacked for a period, never while its frame is still
// being written; a result too large for the link becomes `failed: result too large`.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../../hub-core/src/wire/protocol.ts';
import { MAX_STORE_REFUSALS, ResultOutbox, type JobResult } from '../../../worker-agent/src/result-outbox.ts';

const ok = (job_id: string): JobResult => ({ type: 'job_result', job_id, assignment_id: `a-${job_id}`, status: 'succeeded', result: { n: 1 } });

/** An outbox on a fake link (the one thing here that is not real: the socket), with a hand-driven clock. */
function outboxOn(link: { open: boolean }, maxResultBytes = 1024 * 1024) {
  let now = 1_000;
  const frames: Array<{ frame: JobResult; sent: () => void }> = [];
  const outbox = new ResultOutbox({
    maxResultBytes,
    log: pino({ level: 'silent' }),
    now: () => now,
    transmit: (frame, sent) => {
      if (!link.open) return false;
      frames.push({ frame: JSON.parse(frame) as JobResult, sent });
      return true;
    },
  });
  return { outbox, frames, advance: (ms: number) => (now += ms) };
}

describe('ResultOutbox', () => {
  it('sends a result at once, keeps it until acked, and lists it for the next hello', () => {
    const { outbox, frames } = outboxOn({ open: true });
    outbox.add(ok('j1'));
    expect(frames.map((f) => f.frame.job_id)).toEqual(['j1']);
    expect(outbox.pending()).toEqual([{ job_id: 'j1', assignment_id: 'a-j1' }]);
    outbox.acked('j1');
    expect(outbox.size).toBe(0);
    expect(outbox.pending()).toEqual([]);
  });

  it('keeps a result made while unlinked and sends it on the re-link (resend 0)', () => {
    const link = { open: false };
    const { outbox, frames } = outboxOn(link);
    outbox.add(ok('j1'));
    expect(frames).toHaveLength(0);
    link.open = true;
    outbox.resend(0);
    expect(frames.map((f) => f.frame.job_id)).toEqual(['j1']);
  });

  it('resends only what sat unacked for the period, and never a frame still being written', () => {
    const { outbox, frames, advance } = outboxOn({ open: true });
    outbox.add(ok('j1'));
    outbox.add(ok('j2'));
    frames[0].sent(); // j1 written; j2 still in the socket
    advance(4_000);
    outbox.resend(5_000);
    expect(frames).toHaveLength(2); // not yet a period
    advance(1_000);
    outbox.resend(5_000);
    expect(frames.map((f) => f.frame.job_id)).toEqual(['j1', 'j2', 'j1']);
  });

  it('drops a result the database refused MAX_STORE_REFUSALS times, not before', () => {
    const { outbox } = outboxOn({ open: true });
    outbox.add(ok('j1'));
    for (let i = 1; i < MAX_STORE_REFUSALS; i++) {
      outbox.refused({ job_id: 'j1', code: 'not_stored', reason: 'db down' });
      expect(outbox.size).toBe(1);
    }
    outbox.refused({ job_id: 'j1', code: 'not_stored', reason: 'db down' });
    expect(outbox.size).toBe(0);
  });

  it('replaces a result too large for the hub by `failed: result too large`, and sends that', () => {
    const { outbox, frames } = outboxOn({ open: true });
    outbox.add(ok('j1'));
    outbox.refused({ job_id: 'j1', code: 'too_large', reason: 'over 1 MB' });
    expect(frames.at(-1)!.frame).toEqual({ type: 'job_result', v: 1, job_id: 'j1', assignment_id: 'a-j1', status: 'failed', error: 'result too large: over 1 MB' });
    expect(outbox.pending()).toEqual([{ job_id: 'j1', assignment_id: 'a-j1' }]);
  });

  it('replaces a result the hub could not read by a failure naming the field; later refusals are not replaced again, and the report is dropped after MAX_STORE_REFUSALS', () => {
    const { outbox, frames } = outboxOn({ open: true });
    outbox.add(ok('j1'));
    outbox.refused({ job_id: 'j1', code: 'invalid', reason: 'the result is not valid as sent (assets: too many)' });
    expect(frames.at(-1)!.frame).toEqual({ type: 'job_result', v: 1, job_id: 'j1', assignment_id: 'a-j1', status: 'failed', error: 'result refused by the hub: the result is not valid as sent (assets: too many)' });
    // A late refusal of the original (it was sent twice): the report stays, to be sent again.
    outbox.refused({ job_id: 'j1', code: 'invalid', reason: 'the result is not valid as sent (assets: too many)' });
    expect(outbox.size).toBe(1);
    expect(frames).toHaveLength(2);
    for (let i = 2; i < MAX_STORE_REFUSALS; i++) outbox.refused({ job_id: 'j1', code: 'invalid', reason: 'x' });
    expect(outbox.size).toBe(1);
    outbox.refused({ job_id: 'j1', code: 'invalid', reason: 'x' });
    expect(outbox.size).toBe(0);
    expect(frames).toHaveLength(2);
  });

  it('after the hub closed on an oversized frame (1009), fails only the results over the frame ceiling', () => {
    const { outbox, frames } = outboxOn({ open: true }, 4 * MAX_FRAME_BYTES);
    outbox.add({ ...ok('big'), assets: [{ name: 'x.bin', content_type: 'application/octet-stream', data_base64: 'A'.repeat(MAX_FRAME_BYTES) }] });
    outbox.add(ok('small'));
    frames.length = 0;
    outbox.closedOnOversize();
    expect(frames.map((f) => [f.frame.job_id, f.frame.status])).toEqual([['big', 'failed']]);
    expect(outbox.pending().map((p) => p.job_id).sort()).toEqual(['big', 'small']);
  });

  it('ignores an ack or refusal for a job it does not hold', () => {
    const { outbox, frames } = outboxOn({ open: true });
    outbox.add(ok('j1'));
    outbox.acked('other');
    outbox.refused({ job_id: 'other', code: 'too_large', reason: 'x' });
    expect(outbox.size).toBe(1);
    expect(frames).toHaveLength(1);
  });
});
