import { describe, expect, it } from 'vitest';
import { runShardStoreConformance } from './shardStoreConformance.js';
import { MemoryVolume, openMemoryShard } from './MemoryShardStore.js';
import { dataKey } from './layout.js';

const volumes = new Map<string, MemoryVolume>();
let n = 0;

runShardStoreConformance('MemoryShardStore', {
  newLocation: () => {
    const name = `memory-${n++}`;
    volumes.set(name, new MemoryVolume(name));
    return name;
  },
  open: async (name) => {
    const volume = volumes.get(name);
    if (!volume) throw new Error(`no volume ${name}`);
    return openMemoryShard(volume);
  },
  cleanup: async () => volumes.clear(),
});

describe('MemoryShardStore', () => {
  it('counts the entries each commit writes', async () => {
    const s = await openMemoryShard();
    const key = (i: number) => dataKey(0, new Uint8Array([i]));
    await s.commit(
      0,
      [0, 1, 2].map((i) => ({ key: key(i), value: new Uint8Array([i]), prior: null })),
      3,
      0,
    );
    await s.commit(1, [{ key: key(0), value: null, prior: new Uint8Array([0]) }], -1, 1);
    expect(s.stats.entriesPerCommit).toEqual([5, 4]);
    expect(s.stats.entriesWritten).toBe(9);
    expect(s.stats.commits).toBe(2);
  });
});
