import { describe, expect, it } from 'vitest';
import { PendingHellos } from '../../../hub-core/src/hub/pending-hellos.ts';

describe('PendingHellos', () => {
  it('refuses past the per-source cap, then past the hub cap, and gives a slot back once however often it is released', () => {
    const p = new PendingHellos({ max: 3, perSource: 2 });
    const a1 = p.take('a');
    const a2 = p.take('a');
    expect([a1.ok, a2.ok]).toEqual([true, true]);
    expect(p.take('a')).toEqual({ ok: false, scope: 'source', limit: 2, waiting: 2 });
    expect(p.take('b').ok).toBe(true);
    expect(p.take('c')).toEqual({ ok: false, scope: 'hub', limit: 3, waiting: 3 });
    if (!a1.ok) throw new Error('unreachable');
    a1.release();
    a1.release();
    expect(p.waiting).toBe(2);
    expect(p.take('c').ok).toBe(true);
    expect(p.take('a')).toMatchObject({ ok: false, scope: 'hub' });
  });
});
