import { describe, expect, it } from 'vitest';
import { PendingHellos, type Admission } from '../../../hub-core/src/hub/pending-hellos.ts';

/** A waiting socket: its admission, and whether it was cut to make room. */
function socketOf(p: PendingHellos, source: string) {
  const s = { cut: false, admission: undefined as unknown as Admission };
  s.admission = p.take(source, () => (s.cut = true));
  return s;
}
const slotOf = (a: Admission) => {
  if (!a.ok) throw new Error('refused');
  return a.slot;
};

describe('PendingHellos', () => {
  it('cuts the oldest silent socket of the same source when the source is full, and of any source when the hub is', () => {
    const p = new PendingHellos({ max: 3, perSource: 2 });
    const a1 = socketOf(p, 'a');
    const a2 = socketOf(p, 'a');
    const b1 = socketOf(p, 'b');
    expect(p.waiting).toBe(3);
    // 'a' is full: its oldest silent one goes, not b's.
    const a3 = socketOf(p, 'a');
    expect(a3.admission).toMatchObject({ ok: true, evicted: 1 });
    expect([a1.cut, a2.cut, b1.cut]).toEqual([true, false, false]);
    expect(p.waiting).toBe(3);
    // The hub is full: the oldest silent socket of any source goes.
    const c1 = socketOf(p, 'c');
    expect(c1.admission).toMatchObject({ ok: true, evicted: 1 });
    expect([a2.cut, b1.cut]).toEqual([true, false]);
    expect(p.waiting).toBe(3);
  });

  it('never cuts a socket whose hello is being checked: with every slot so held, a newcomer is refused', () => {
    const p = new PendingHellos({ max: 2, perSource: 2 });
    const a1 = socketOf(p, 'a');
    const b1 = socketOf(p, 'b');
    slotOf(a1.admission).heard();
    // The hub is full; a1 is checking its hello, b1 is silent: b1 goes.
    const c1 = socketOf(p, 'c');
    expect([a1.cut, b1.cut]).toEqual([false, true]);
    slotOf(c1.admission).heard();
    expect(socketOf(p, 'd').admission).toEqual({ ok: false, scope: 'hub', limit: 2 });
    const a2 = socketOf(p, 'a');
    expect(a2.admission).toEqual({ ok: false, scope: 'hub', limit: 2 });
    // A slot released (linked, or gone) admits again, once however often it is released.
    slotOf(a1.admission).release();
    slotOf(a1.admission).release();
    expect(p.waiting).toBe(1);
    const d = socketOf(p, 'd');
    expect(d.admission).toMatchObject({ ok: true, evicted: 0 });
    // Full again, d silent: the newcomer takes d's place.
    expect(socketOf(p, 'e').admission).toMatchObject({ ok: true, evicted: 1 });
    expect(d.cut).toBe(true);
  });

  it('a source full of sockets checking their hellos is refused by source, and a cut socket released later changes nothing', () => {
    const p = new PendingHellos({ max: 10, perSource: 1 });
    const a1 = socketOf(p, 'a');
    slotOf(a1.admission).heard();
    expect(socketOf(p, 'a').admission).toEqual({ ok: false, scope: 'source', limit: 1 });
    const b1 = socketOf(p, 'b');
    const b2 = socketOf(p, 'b');
    expect(b1.cut).toBe(true);
    slotOf(b1.admission).release(); // its close arrives after the cut
    expect(p.waiting).toBe(2);
    expect(b2.cut).toBe(false);
  });

  it('cuts a socket being closed unlinked before any silent one, even one it had heard', () => {
    const p = new PendingHellos({ max: 3, perSource: 3 });
    const silent = socketOf(p, 'a');
    const refused = socketOf(p, 'a');
    const checking = socketOf(p, 'a');
    slotOf(refused.admission).heard();
    slotOf(refused.admission).ending(); // its hello was refused: the hub is closing it
    slotOf(checking.admission).heard();
    expect(socketOf(p, 'a').admission).toMatchObject({ ok: true, evicted: 1 });
    expect([silent.cut, refused.cut, checking.cut]).toEqual([false, true, false]);
    expect(socketOf(p, 'a').admission).toMatchObject({ ok: true, evicted: 1 });
    expect([silent.cut, checking.cut]).toEqual([true, false]);
  });
});
