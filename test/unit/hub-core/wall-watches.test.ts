// The wall's watch book: a worker's union of watched lanes over every watcher, which workers'
// unions a replace-set changes, and which tiles are new to a watcher (they get the cached frame).
import { describe, expect, it } from 'vitest';
import { WallWatches } from '../../../hub-core/src/domain/wall-watches.ts';

const t = (worker_id: string, lane: number) => ({ worker_id, lane });

describe('WallWatches', () => {
  it('keeps the union of lanes per worker over all watchers, ascending', () => {
    const book = new WallWatches<string>();
    book.set('a', [t('w1', 2), t('w1', 0), t('w2', 1)]);
    book.set('b', [t('w1', 0), t('w1', 3)]);
    expect(book.lanesOf('w1')).toEqual([0, 2, 3]);
    expect(book.lanesOf('w2')).toEqual([1]);
    expect(book.lanesOf('w3')).toEqual([]);
    expect([...book.watchersOf('w1', 0)].sort()).toEqual(['a', 'b']);
    expect([...book.workers()].sort()).toEqual(['w1', 'w2']);
  });

  it('reports a worker as changed only when its union moves', () => {
    const book = new WallWatches<string>();
    expect([...book.set('a', [t('w1', 0), t('w2', 0)]).workers].sort()).toEqual(['w1', 'w2']);
    // b adds nothing new to w1's union
    expect([...book.set('b', [t('w1', 0)]).workers]).toEqual([]);
    // a drops w1 lane 0, but b still watches it; a drops w2: only w2 changes
    expect([...book.set('a', []).workers]).toEqual(['w2']);
    expect([...book.remove('b').workers]).toEqual(['w1']);
    expect(book.lanesOf('w1')).toEqual([]);
    expect(book.watcherCount).toBe(0);
  });

  it('names only tiles new to the watcher as added; duplicates collapse', () => {
    const book = new WallWatches<string>();
    expect(book.set('a', [t('w1', 0), t('w1', 0), t('w1', 1)]).added).toEqual([t('w1', 0), t('w1', 1)]);
    expect(book.set('a', [t('w1', 1), t('w1', 2)]).added).toEqual([t('w1', 2)]);
    expect(book.watchersOf('w1', 0).size).toBe(0);
    expect(book.lanesOf('w1')).toEqual([1, 2]);
  });
});
