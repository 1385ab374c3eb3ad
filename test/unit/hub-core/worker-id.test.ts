import { describe, expect, it } from 'vitest';
import { longWorkerId, shortWorkerId, workerIdFor } from '../../../hub-core/src/domain/worker-id.ts';

describe('workerIdFor', () => {
  it('derives the id from the third and fourth octets', () => {
    expect(shortWorkerId('10.10.50.150')).toBe('w50150');
    expect(workerIdFor('10.10.50.150', () => undefined)).toBe('w50150');
  });

  it('gives the same IP the same id again', () => {
    const held = new Map([['w50150', '10.10.50.150']]);
    expect(workerIdFor('10.10.50.150', (id) => held.get(id))).toBe('w50150');
  });

  it('falls back to the full address when another IP holds the short id', () => {
    const held = new Map([['w5150', '10.10.5.150']]);
    expect(shortWorkerId('10.10.51.50')).toBe('w5150');
    expect(workerIdFor('10.10.51.50', (id) => held.get(id))).toBe('w10-10-51-50');
    expect(longWorkerId('10.10.5.150')).toBe('w10-10-5-150');
  });

  it('rejects what is not an IPv4 address', () => {
    expect(() => workerIdFor('10.10.50', () => undefined)).toThrow(/IPv4/);
    expect(() => workerIdFor('::1', () => undefined)).toThrow(/IPv4/);
  });
});
