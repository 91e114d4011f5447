import { describe, expect, it } from 'vitest';
import type { ShardStore } from '@sluice/state';
import { openMemoryShard } from '@sluice/state/testing';
import { StateWriter } from './stateWriter.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : new TextDecoder().decode(b));

async function read(store: ShardStore, ...keys: string[]): Promise<Array<string | undefined>> {
  return (await store.getMany(keys.map(bytes))).map(text);
}

/** A shard holding a=1 and b=2 after batch 0. */
async function shard(): Promise<ShardStore> {
  const store = await openMemoryShard();
  await store.commit(
    0,
    [
      { key: bytes('a'), value: bytes('1'), prior: null },
      { key: bytes('b'), value: bytes('2'), prior: null },
    ],
    2,
    0,
  );
  return store;
}

/** The store, seen through a view that counts the keys its getMany reads. */
function countingReads(store: ShardStore): { counting: ShardStore; reads: () => number } {
  let reads = 0;
  const counting: ShardStore = Object.create(store, {
    getMany: {
      value: (keys: Uint8Array[]) => {
        reads += keys.length;
        return store.getMany(keys);
      },
    },
  });
  return { counting, reads: () => reads };
}

describe('StateWriter: every change is undone to the state before the batch, whatever the operator knew', () => {
  it('a key written without a read gets its prior from the shard at the flush', async () => {
    const store = await shard();
    const w = new StateWriter(store, 1);
    w.put(bytes('a'), bytes('10')); // never read: its prior is read at the flush
    w.delete(bytes('b'));
    w.put(bytes('c'), bytes('30'));
    await w.finish(0, 0);
    expect(await read(store, 'a', 'b', 'c')).toEqual(['10', undefined, '30']);
    expect(await store.rollbackIfAt(1)).toBe(true);
    expect(await read(store, 'a', 'b', 'c')).toEqual(['1', '2', undefined]);
  });

  it('a key read through it, and one the cache knew just before its change, need no read at the end; a second change keeps the first prior', async () => {
    const store = await shard();
    const { counting, reads } = countingReads(store);
    const w = new StateWriter(counting, 1);
    const a = bytes('a');
    expect((await w.read([a])).map(text)).toEqual(['1']);
    w.put(a, bytes('10'));
    w.put(a, bytes('11'));
    const b = bytes('b');
    w.cached(b, bytes('2'));
    w.delete(b);
    await w.finish(0, 0);
    expect(reads()).toBe(1);
    expect(await read(counting, 'a', 'b')).toEqual(['11', undefined]);
    await counting.rollbackIfAt(1);
    expect(await read(counting, 'a', 'b')).toEqual(['1', '2']);
  });

  it('keys changed in another order than they were read, some skipped, still need no read at the end and roll back exactly', async () => {
    const store = await openMemoryShard();
    const names = Array.from({ length: 40 }, (_, i) => `k${i}`);
    await store.commit(
      0,
      names.filter((_, i) => i % 2 === 0).map((n) => ({ key: bytes(n), value: bytes(`old-${n}`), prior: null })),
      20,
      0,
    );
    const { counting, reads } = countingReads(store);
    const w = new StateWriter(counting, 1);
    const keys = names.map(bytes);
    await w.read(keys.slice(0, 20));
    await w.read(keys.slice(20));
    // In read order with gaps, then backwards (past the look-ahead), then one key again.
    for (let i = 0; i < 10; i += 3) w.put(keys[i]!, bytes(`new-${i}`));
    for (let i = 39; i >= 10; i -= 2) w.delete(keys[i]!);
    w.put(keys[0]!, bytes('newer-0'));
    await w.finish(0, 0);
    expect(reads()).toBe(40);
    expect(await read(counting, 'k0', 'k3', 'k6', 'k9', 'k11', 'k39', 'k2')).toEqual(['newer-0', 'new-3', 'new-6', 'new-9', undefined, undefined, 'old-k2']);
    await counting.rollbackIfAt(1);
    expect(await read(counting, ...names)).toEqual(names.map((n, i) => (i % 2 === 0 ? `old-${n}` : undefined)));
  });

  it('index entries: an added one is new, a removed one existed; a task that changes nothing commits nothing', async () => {
    const store = await shard();
    const idle = new StateWriter(store, 1);
    expect(await idle.finish(0, 0)).toBeUndefined();
    expect(store.marker).toBe(0);
    const w = new StateWriter(store, 1);
    w.addIndex(bytes('i1'));
    w.removeIndex(bytes('a'));
    await w.finish(0, 0);
    expect(store.marker).toBe(1);
    expect(await read(store, 'i1', 'a')).toEqual(['', undefined]);
    await store.rollbackIfAt(1);
    expect(await read(store, 'i1', 'a')).toEqual([undefined, '']);
  });
});
