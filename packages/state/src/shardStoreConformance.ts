/**
 * The behaviour every ShardStore must have, as a vitest suite that each implementation runs with
 * its own factory (LevelShardStore.test.ts, MemoryShardStore.test.ts). Not exported from the
 * package index: it imports vitest.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { encodeKey } from './keyEncoding.js';
import { dataKey, dataRange, decodeIndexKey, indexKey, indexRange, indexRangeUpTo, keyGroupsDataRange } from './layout.js';
import { InstrumentedShardStore } from './MemoryShardStore.js';
import type { ShardChange, ShardStore } from './ShardStore.js';

export interface ShardStoreFactory {
  /** A fresh, empty location (a directory for LevelDB, a volume name in memory). */
  newLocation(): string | Promise<string>;
  open(location: string): Promise<ShardStore>;
  /** Called once after the suite (e.g. to remove directories). */
  cleanup?(): Promise<void>;
  /** Keys of state in the O(changes) test; default 1_000_000. */
  bigStateKeys?: number;
  /** Timeout of that test; default 120 s. */
  bigStateTimeoutMs?: number;
}

const utf8 = new TextEncoder();
const k = (s: string) => dataKey(0, utf8.encode(s));
const v = (s: string) => utf8.encode(s);
const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('utf8'));
const put = (key: Uint8Array, value: Uint8Array, prior: Uint8Array | null = null): ShardChange => ({ key, value, prior });
const del = (key: Uint8Array, prior: Uint8Array | null): ShardChange => ({ key, value: null, prior });
// Everything but the store's own records (meta 0x00, undo 0x03): data and index.
const STATE: [Uint8Array, Uint8Array] = [new Uint8Array([0x01]), new Uint8Array([0x03])];

async function dump(s: ShardStore): Promise<string[]> {
  return (await s.range(...STATE)).map(([key, value]) => `${hex(key)}=${hex(value)}`);
}

export function runShardStoreConformance(name: string, factory: ShardStoreFactory): void {
  describe(`ShardStore conformance: ${name}`, () => {
    const opened: ShardStore[] = [];
    const open = async (location?: string): Promise<ShardStore> => {
      const s = await factory.open(location ?? (await factory.newLocation()));
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close().catch(() => undefined);
    });
    afterAll(async () => {
      await factory.cleanup?.();
    });

    it('starts empty at marker -1', async () => {
      const s = await open();
      expect(s.marker).toBe(-1);
      expect(s.numRows).toBe(0);
      expect(await s.getMany([k('a')])).toEqual([undefined]);
      expect(await s.getMany([])).toEqual([]);
      expect(await s.range(...dataRange())).toEqual([]);
    });

    it('applies puts and deletes of a commit, and tracks marker and numRows', async () => {
      const s = await open();
      await s.commit(0, [put(k('a'), v('1')), put(k('b'), v('2')), put(k('c'), v('3'))], 3, 0);
      expect(s.marker).toBe(0);
      expect(s.numRows).toBe(3);
      expect((await s.getMany([k('a'), k('b'), k('x'), k('c')])).map(text)).toEqual(['1', '2', undefined, '3']);
      await s.commit(1, [del(k('b'), v('2')), put(k('a'), v('10'), v('1'))], -1, 0);
      expect(s.marker).toBe(1);
      expect(s.numRows).toBe(2);
      expect((await s.getMany([k('a'), k('b'), k('c')])).map(text)).toEqual(['10', undefined, '3']);
    });

    it('keeps an empty value apart from an absent key, also through a rollback', async () => {
      const s = await open();
      await s.commit(0, [put(k('e'), new Uint8Array(0))], 1, 0);
      const [got] = await s.getMany([k('e')]);
      expect(got).toBeDefined();
      expect(got?.length).toBe(0);
      await s.commit(1, [put(k('e'), v('x'), new Uint8Array(0))], 0, 0);
      expect(await s.rollbackIfAt(1)).toBe(true);
      const [back] = await s.getMany([k('e')]);
      expect(back?.length).toBe(0);
    });

    it('returns ranges in byte order within bounds and limit, index times in numeric order', async () => {
      const s = await open();
      const key = encodeKey(['k'], ['string']);
      const times = [1_700_000_000_000, -86_400_000, 5, 0, -1, 2 ** 40, -(2 ** 40)];
      const kgs = [4095, 0, 256, 1, 255];
      const changes: ShardChange[] = [
        ...kgs.map((kg) => put(dataKey(kg, key), v(`kg${kg}`))),
        ...times.map((t, i) => put(indexKey(t, i, key), new Uint8Array(0))),
      ];
      await s.commit(0, changes, kgs.length, 0);
      const data = await s.range(...dataRange());
      expect(data.map(([, value]) => text(value))).toEqual(['kg0', 'kg1', 'kg255', 'kg256', 'kg4095']);
      const index = await s.range(...indexRange());
      expect(index.map(([ik]) => decodeIndexKey(ik).timeMs)).toEqual([...times].sort((a, b) => a - b));
      const upTo0 = await s.range(...indexRangeUpTo(0));
      expect(upTo0.map(([ik]) => decodeIndexKey(ik).timeMs)).toEqual([-(2 ** 40), -86_400_000, -1, 0]);
      const limited = await s.range(...indexRangeUpTo(0), 2);
      expect(limited.map(([ik]) => decodeIndexKey(ik).timeMs)).toEqual([-(2 ** 40), -86_400_000]);
      const groups = await s.range(...keyGroupsDataRange(1, 256));
      expect(groups.map(([, value]) => text(value))).toEqual(['kg1', 'kg255']);
      expect(await s.range(...keyGroupsDataRange(5, 5))).toEqual([]);
      // rangeKeys gives the keys of range, bounds and limit included.
      expect((await s.rangeKeys(...indexRangeUpTo(0), 2)).map((ik) => decodeIndexKey(ik).timeMs)).toEqual([-(2 ** 40), -86_400_000]);
      expect((await s.rangeKeys(...dataRange())).map((x) => [...x])).toEqual(data.map(([key]) => [...key]));
    });

    it('rolls back created, changed and deleted keys, marker and numRows exactly', async () => {
      const s = await open();
      const ik = indexKey(-5, 0, v('c'));
      await s.commit(4, [put(k('a'), v('1')), put(k('b'), v('2')), put(k('keep'), v('k'))], 3, 0);
      const before = await dump(s);
      await s.commit(7, [put(k('a'), v('10'), v('1')), del(k('b'), v('2')), put(k('c'), v('3')), put(ik, new Uint8Array(0))], 0, 0);
      expect(await dump(s)).not.toEqual(before);
      expect(await s.rollbackIfAt(7)).toBe(true);
      expect(await dump(s)).toEqual(before);
      expect(s.marker).toBe(4);
      expect(s.numRows).toBe(3);
      expect(await s.rollbackIfAt(4)).toBe(true);
      expect(await dump(s)).toEqual([]);
      expect(s.marker).toBe(-1);
      expect(s.numRows).toBe(0);
    });

    it('does nothing when asked to roll back a batch it is not at', async () => {
      const s = await open();
      await s.commit(3, [put(k('a'), v('1'))], 1, 0);
      const before = await dump(s);
      expect(await s.rollbackIfAt(2)).toBe(false);
      expect(await s.rollbackIfAt(4)).toBe(false);
      expect(await dump(s)).toEqual(before);
      expect(s.marker).toBe(3);
      expect(s.numRows).toBe(1);
    });

    it('restores the recorded prior marker with sparse markers, and lets the batch commit again', async () => {
      const s = await open();
      await s.commit(3, [put(k('a'), v('3'))], 1, 0);
      // Batch 4 had no data for this shard.
      await s.commit(5, [put(k('a'), v('5'), v('3'))], 0, 0);
      expect(await s.rollbackIfAt(5)).toBe(true);
      expect(s.marker).toBe(3);
      expect(text((await s.getMany([k('a')]))[0])).toBe('3');
      await s.commit(5, [put(k('a'), v('5b'), v('3')), put(k('z'), v('z'))], 1, 0);
      expect(s.marker).toBe(5);
      expect(s.numRows).toBe(2);
      expect((await s.getMany([k('a'), k('z')])).map(text)).toEqual(['5b', 'z']);
    });

    it('refuses to commit at or below its marker without a rollback', async () => {
      const s = await open();
      await s.commit(3, [put(k('a'), v('1'))], 1, 0);
      for (const id of [3, 2]) {
        await expect(s.commit(id, [put(k('a'), v('x'), v('1'))], 0, 0)).rejects.toMatchObject({
          code: 'STATE_COMMIT_OUT_OF_ORDER',
        });
      }
      expect(text((await s.getMany([k('a')]))[0])).toBe('1');
      expect(s.marker).toBe(3);
    });

    it('lets the last change of a key win and restores its first prior on rollback', async () => {
      const s = await open();
      await s.commit(0, [put(k('a'), v('0'))], 1, 0);
      await s.commit(1, [put(k('a'), v('1'), v('0')), put(k('a'), v('2'), v('1')), del(k('a'), v('2'))], -1, 0);
      expect(await s.getMany([k('a')])).toEqual([undefined]);
      await s.rollbackIfAt(1);
      expect(text((await s.getMany([k('a')]))[0])).toBe('0');
    });

    it('prunes undo records on commit, after which their batch cannot be rolled back', async () => {
      const s = await open();
      await s.commit(1, [put(k('a'), v('1'))], 1, 0);
      await s.commit(2, [put(k('a'), v('2'), v('1'))], 0, 0);
      const r = await s.commit(3, [put(k('a'), v('3'), v('2'))], 0, 3);
      expect(r.entriesWritten).toBe(1 + 2 + 2);
      expect(await s.rollbackIfAt(3)).toBe(true);
      expect(s.marker).toBe(2);
      await expect(s.rollbackIfAt(2)).rejects.toMatchObject({ code: 'STATE_UNDO_MISSING' });
      expect(s.marker).toBe(2);
      expect(text((await s.getMany([k('a')]))[0])).toBe('2');
    });

    it('never prunes the undo record of the batch being committed', async () => {
      const s = await open();
      await s.commit(1, [put(k('a'), v('1'))], 1, 5);
      expect(await s.rollbackIfAt(1)).toBe(true);
      expect(s.marker).toBe(-1);
    });

    it('prunes undo records on request', async () => {
      const s = await open();
      await s.commit(1, [put(k('a'), v('1'))], 1, 0);
      await s.commit(2, [put(k('a'), v('2'), v('1'))], 0, 0);
      expect(await s.pruneUndoBelow(2)).toBe(1);
      expect(await s.pruneUndoBelow(2)).toBe(0);
      expect(await s.rollbackIfAt(2)).toBe(true);
      await expect(s.rollbackIfAt(1)).rejects.toMatchObject({ code: 'STATE_UNDO_MISSING' });
    });

    it('keeps data, marker, numRows and undo across close and reopen', async () => {
      const loc = await factory.newLocation();
      const s = await open(loc);
      await s.commit(1, [put(k('a'), v('1')), put(indexKey(-3, 2, v('i')), v(''))], 1, 0);
      await s.commit(2, [put(k('a'), v('2'), v('1')), put(k('b'), v('b'))], 1, 0);
      const before = await dump(s);
      await s.close();
      const t = await open(loc);
      expect(t.marker).toBe(2);
      expect(t.numRows).toBe(2);
      expect(await dump(t)).toEqual(before);
      expect(await t.rollbackIfAt(2)).toBe(true);
      expect(t.marker).toBe(1);
      expect(t.numRows).toBe(1);
      await t.close();
      const u = await open(loc);
      expect(u.marker).toBe(1);
      expect((await u.getMany([k('a'), k('b')])).map(text)).toEqual(['1', undefined]);
    });

    it('reports the bytes of its state: small for a few rows, growing with the state, kept across a reopen', async () => {
      const loc = await factory.newLocation();
      const s = await open(loc);
      await s.commit(0, [put(k('a'), v('1')), put(k('b'), v('2')), put(k('c'), v('3'))], 3, 0);
      const small = await s.stateBytes();
      expect(small).toBeGreaterThan(0);
      expect(small).toBeLessThan(64 << 10);
      const many: ShardChange[] = [];
      for (let i = 0; i < 5000; i++) many.push(put(k(`key-${i}`), v(`value-${i}-${'x'.repeat(24)}`)));
      await s.commit(1, many, many.length, 0);
      const big = await s.stateBytes();
      // 5,000 keys of about 45 bytes each: LevelDB compresses its files, so ask for a fraction.
      expect(big).toBeGreaterThan(small + 5000 * 10);
      await s.close();
      const again = await open(loc);
      expect(await again.stateBytes()).toBeGreaterThan(small + 5000 * 10);
      await again.close();
      await expect(again.stateBytes()).rejects.toMatchObject({ code: 'STATE_STORE_CLOSED' });
    });

    it('moves raw entries for a repartition, and resets the marker with no undo left, across a reopen', async () => {
      const loc = await factory.newLocation();
      const s = await open(loc);
      await s.commit(3, [put(k('a'), v('1')), put(k('b'), v('2'))], 2, 0);
      await s.applyMove(
        [
          { type: 'put', key: k('c'), value: v('3') },
          { type: 'del', key: k('a') },
        ],
        0,
      );
      expect(s.marker).toBe(3);
      expect(s.numRows).toBe(2);
      await s.applyMove([{ type: 'del', key: k('b') }], -1);
      await s.resetMarker(7);
      await s.close();
      const again = await open(loc);
      expect(again.marker).toBe(7);
      expect(again.numRows).toBe(1);
      expect((await again.getMany([k('a'), k('b'), k('c')])).map(text)).toEqual([undefined, undefined, '3']);
      await expect(again.rollbackIfAt(3)).resolves.toBe(false);
      await expect(again.rollbackIfAt(7)).rejects.toMatchObject({ code: 'STATE_UNDO_MISSING' });
    });

    it('refuses a second open of the same location with STATE_STORE_LOCKED', async () => {
      const loc = await factory.newLocation();
      await open(loc);
      await expect(factory.open(loc)).rejects.toMatchObject({ code: 'STATE_STORE_LOCKED', file: loc });
    });

    it('refuses use after close with STATE_STORE_CLOSED, and closes twice quietly', async () => {
      const s = await open();
      await s.close();
      await s.close();
      await expect(s.getMany([k('a')])).rejects.toMatchObject({ code: 'STATE_STORE_CLOSED' });
      await expect(s.commit(0, [], 0, 0)).rejects.toMatchObject({ code: 'STATE_STORE_CLOSED' });
      await expect(s.rollbackIfAt(0)).rejects.toMatchObject({ code: 'STATE_STORE_CLOSED' });
    });

    it('does not alias the buffers it was given', async () => {
      const s = await open();
      const value = v('abc');
      const key = k('a');
      await s.commit(0, [put(key, value)], 1, 0);
      value[0] = 0x7a;
      key[3] = 0x7a;
      expect(text((await s.getMany([k('a')]))[0])).toBe('abc');
    });

    it('serialises concurrent commits in call order', async () => {
      const s = await open();
      const first = s.commit(1, [put(k('a'), v('1'))], 1, 0);
      const second = s.commit(2, [put(k('a'), v('2'), v('1'))], 0, 0);
      const stale = s.commit(2, [put(k('a'), v('x'), v('2'))], 0, 0);
      await first;
      await second;
      await expect(stale).rejects.toMatchObject({ code: 'STATE_COMMIT_OUT_OF_ORDER' });
      expect(s.marker).toBe(2);
      expect(text((await s.getMany([k('a')]))[0])).toBe('2');
    });

    it('counts the changes, the undo record and the meta as the entries of a commit', async () => {
      const s = await open();
      expect((await s.commit(0, [put(k('a'), v('1')), put(k('b'), v('2')), put(k('c'), v('3'))], 3, 0)).entriesWritten).toBe(5);
      expect((await s.commit(1, [], 0, 0)).entriesWritten).toBe(2);
    });

    const big = factory.bigStateKeys ?? 1_000_000;
    it(
      `writes O(1) entries for a 1-row batch over ${big} keys of state`,
      async () => {
        const s = new InstrumentedShardStore(await open());
        opened.push(s);
        const chunk = 100_000;
        const value = new Uint8Array(8);
        let batch = 0;
        for (let start = 0; start < big; start += chunk) {
          const changes: ShardChange[] = [];
          for (let i = start; i < Math.min(big, start + chunk); i++) {
            const key = encodeKey([i], ['long']);
            changes.push(put(dataKey(i % 4096, key), value));
          }
          await s.commit(batch, changes, changes.length, batch);
          batch++;
        }
        expect(s.numRows).toBe(big);
        const one = dataKey(7, encodeKey(['one more'], ['string']));
        const r = await s.commit(batch, [put(one, v('x'))], 1, batch - 1);
        expect(r.entriesWritten).toBeLessThanOrEqual(4);
        expect(s.entriesPerCommit.at(-1)).toBe(r.entriesWritten);
        expect(s.numRows).toBe(big + 1);
        // The rollback of that batch touches only its key.
        expect(await s.rollbackIfAt(batch)).toBe(true);
        expect(s.numRows).toBe(big);
        const [gone, kept] = await s.getMany([one, dataKey(0, encodeKey([0], ['long']))]);
        expect(gone).toBeUndefined();
        expect(kept && hex(kept)).toBe(hex(value));
      },
      factory.bigStateTimeoutMs ?? 120_000,
    );
  });
}
