/**
 * The key table of the decoded aggregation state (keyTable.ts): keys churned through removal and
 * compaction, as a windowed count whose keys all change every batch churns them; keyless entries.
 */
import { describe, expect, it } from 'vitest';
import { KeyTable } from './keyTable.js';

const keyOf = (n: number): Uint8Array => new TextEncoder().encode(`key-${n}`);

function insert(t: KeyTable, n: number): number {
  const k = keyOf(n);
  return t.insert(k, 0, k.length, KeyTable.hash(k, 0, k.length));
}

function find(t: KeyTable, n: number): number {
  const k = keyOf(n);
  return t.find(k, 0, k.length, KeyTable.hash(k, 0, k.length));
}

describe('KeyTable', () => {
  it('takes every new key after a compaction to a size that is no power of two (each batch all keys replaced)', () => {
    const t = new KeyTable(1, 1);
    const perBatch = 20_000;
    for (let batch = 0; batch < 8; batch++) {
      // As the aggregation does at a batch's start: compact once the tombstones outnumber the live keys.
      if (t.count - t.size > Math.max(1024, t.size)) t.compact();
      const entries = Array.from({ length: perBatch }, (_, i) => insert(t, batch * perBatch + i));
      expect(t.size).toBe(batch === 0 ? perBatch : 2 * perBatch);
      for (let i = 0; i < perBatch; i += 997) expect(find(t, batch * perBatch + i)).toBe(entries[i]);
      // The batch before's keys expire.
      if (batch > 0) for (let i = 0; i < perBatch; i++) t.remove(find(t, (batch - 1) * perBatch + i));
      expect(t.size).toBe(perBatch);
    }
    expect(find(t, 0)).toBe(-1);
  });

  it('holds keyless entries apart from the keys: find never gives them, growth keeps their cells', () => {
    const t = new KeyTable(1, 1);
    const kept = insert(t, 1);
    const scratch = Array.from({ length: 5000 }, (_, i) => {
      const e = t.append();
      t.cells[e] = i;
      return e;
    });
    expect(t.size).toBe(1);
    expect(find(t, 1)).toBe(kept);
    expect(scratch.every((e, i) => t.cells[e] === i && !t.isLive(e))).toBe(true);
  });
});
