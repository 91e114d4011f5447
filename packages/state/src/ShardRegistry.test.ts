import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARD_FIXED_FILES, ShardRegistry } from './ShardRegistry.js';
import { MemoryVolume, openMemoryShard } from './MemoryShardStore.js';
import { dataKey } from './layout.js';
import type { ShardOptions, ShardStore } from './ShardStore.js';

const opts: ShardOptions = { cacheBytes: 1 << 20, writeBufferBytes: 1 << 20, maxOpenFiles: 80 };
const root = mkdtempSync(join(tmpdir(), 'sluice-registry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function memoryOpener() {
  const volumes = new Map<string, MemoryVolume>();
  const calls: string[] = [];
  const opener = async (dir: string): Promise<ShardStore> => {
    calls.push(dir);
    await new Promise((r) => setTimeout(r, 5));
    let v = volumes.get(dir);
    if (!v) {
      v = new MemoryVolume(dir);
      volumes.set(dir, v);
    }
    return openMemoryShard(v);
  };
  return { opener, calls };
}

describe('ShardRegistry', () => {
  it('opens a directory once and shares it between concurrent and later callers', async () => {
    const { opener, calls } = memoryOpener();
    const reg = new ShardRegistry(opener);
    const [a, b] = await Promise.all([reg.get('/s/0', opts), reg.get('/s/0', opts)]);
    expect(a).toBe(b);
    expect(await reg.get('/s/0', opts)).toBe(a);
    const c = await reg.get('/s/1', opts);
    expect(c).not.toBe(a);
    expect(calls).toEqual(['/s/0', '/s/1']);
    expect(reg.dirs().sort()).toEqual(['/s/0', '/s/1']);
    await reg.closeAll();
    expect(reg.dirs()).toEqual([]);
  });

  it('reopens after close, keeping the committed state', async () => {
    const { opener, calls } = memoryOpener();
    const reg = new ShardRegistry(opener);
    const s = await reg.get('/s/0', opts);
    await s.commit(1, [{ key: dataKey(0, new Uint8Array([1])), value: new Uint8Array([9]), prior: null }], 1, 0);
    await reg.close('/s/0');
    await expect(s.getMany([])).rejects.toMatchObject({ code: 'STATE_STORE_CLOSED' });
    const t = await reg.get('/s/0', opts);
    expect(t).not.toBe(s);
    expect(t.marker).toBe(1);
    expect(calls).toEqual(['/s/0', '/s/0']);
    await reg.closeAll();
  });

  it('does not cache a failed open', async () => {
    let fail = true;
    const reg = new ShardRegistry(async () => {
      if (fail) throw Object.assign(new Error('boom'), { code: 'STATE_STORE_LOCKED' });
      return openMemoryShard();
    });
    await expect(reg.get('/s/0', opts)).rejects.toMatchObject({ code: 'STATE_STORE_LOCKED' });
    expect(reg.has('/s/0')).toBe(false);
    fail = false;
    await expect(reg.get('/s/0', opts)).resolves.toBeDefined();
    await reg.closeAll();
  });

  it('lets a LevelDB shard be reopened right after an unawaited close (no lock error)', async () => {
    const reg = new ShardRegistry();
    const dir = join(root, 'a');
    const s = await reg.get(dir, opts);
    await s.commit(0, [{ key: dataKey(1, new Uint8Array([1])), value: new Uint8Array([2]), prior: null }], 1, 0);
    void reg.close(dir);
    const t = await reg.get(dir, opts);
    expect(t).not.toBe(s);
    expect(t.marker).toBe(0);
    expect(reg.memoryUsedBytes()).toBe(t.memoryUsedBytes());
    await reg.closeAll();
    expect(reg.memoryUsedBytes()).toBe(0);
  });
});

describe('ShardRegistry budgets', () => {
  const openFds = (): number => readdirSync('/proc/self/fd').length;
  const budget = (maxOpenFiles: number, maxMemoryBytes = 1 << 30) => ({ maxOpenFiles, maxMemoryBytes });
  const put = (store: ShardStore, batch: number, n: number) =>
    store.commit(
      batch,
      Array.from({ length: n }, (_, i) => ({
        key: dataKey(i % 4, new Uint8Array([batch, i & 255, i >> 8])),
        value: new Uint8Array(64).fill(i & 255),
        prior: null,
      })),
      n,
      batch - 1,
    );

  it('closes the least recently used idle shard to keep the files the open shards really hold within the budget', async () => {
    const evicted: string[] = [];
    const reg = new ShardRegistry(undefined, (d) => evicted.push(d));
    const dirs = [0, 1, 2, 3].map((i) => join(root, `lru-${i}`));
    // Each fresh shard is charged its fixed files only: three fit, the fourth makes room.
    const b = budget(3 * SHARD_FIXED_FILES);
    try {
      for (const [i, d] of dirs.entries()) await reg.use(d, opts, b, (s) => put(s, 0, 10 + i));
      expect(evicted).toEqual([dirs[0]]);
      expect(reg.dirs()).toEqual(dirs.slice(1));
      expect(reg.charged().files).toBeLessThanOrEqual(b.maxOpenFiles);
      // Using shard 1 makes shard 2 the least recently used; reopening shard 0 closes it.
      await reg.use(dirs[1] as string, opts, b, async () => undefined);
      const marker = await reg.use(dirs[0] as string, opts, b, async (s) => s.marker);
      expect(marker).toBe(0);
      // Reopened, shard 0 turned its log into a table file (LevelDB does on open), which puts the
      // shards one file over the budget: the least recently used idle one (3) is closed after the use.
      expect(evicted).toEqual([dirs[0], dirs[2], dirs[3]]);
      expect(reg.charged().files).toBeLessThanOrEqual(b.maxOpenFiles);
      expect(reg.evictions).toBe(3);
    } finally {
      await reg.closeAll();
    }
  });

  it('never closes a shard in use, and charges memory as the configured caches and buffers', async () => {
    const reg = new ShardRegistry();
    const mem = opts.cacheBytes + 2 * opts.writeBufferBytes;
    const b = budget(1000, mem);
    const [a, c] = [join(root, 'busy-a'), join(root, 'busy-c')];
    try {
      await reg.use(a, opts, b, async () => {
        // a is in use: c opens beside it, over the memory budget, rather than closing a under a task.
        await reg.use(c, opts, b, async () => undefined);
        expect(reg.dirs().sort()).toEqual([a, c].sort());
        expect(reg.charged().memoryBytes).toBe(2 * mem);
      });
      // a's use over, the idle c is closed to get back within the budget.
      expect(reg.dirs()).toEqual([a]);
      expect(reg.charged().memoryBytes).toBe(mem);
      // Reopening a with other options closes it first.
      await reg.use(a, { ...opts, cacheBytes: opts.cacheBytes / 2 }, b, async () => undefined);
      expect(reg.dirs()).toEqual([a]);
      expect(reg.charged().memoryBytes).toBe(mem - opts.cacheBytes / 2);
    } finally {
      await reg.closeAll();
    }
  });

  it('charges at least the file handles LevelDB really holds, measured in /proc/self/fd', async () => {
    const reg = new ShardRegistry();
    const before = openFds();
    try {
      for (let i = 0; i < 6; i++) {
        const d = join(root, `fds-${i}`);
        // Several commits flushed past a small write buffer leave table files to read.
        for (let batch = 0; batch < 4; batch++) await reg.use(d, { ...opts, writeBufferBytes: 64 << 10 }, budget(10_000), (s) => put(s, batch, 2000));
        await reg.use(d, { ...opts, writeBufferBytes: 64 << 10 }, budget(10_000), (s) => s.getMany([dataKey(0, new Uint8Array([0, 0, 0]))]));
      }
      const held = openFds() - before;
      const { files } = reg.charged();
      expect(held).toBeGreaterThan(0);
      expect(files).toBeGreaterThanOrEqual(held);
      // Not the worst case of 74 per shard: the charge follows what is there.
      expect(files).toBeLessThan(6 * 74);
    } finally {
      await reg.closeAll();
    }
    expect(openFds()).toBeLessThanOrEqual(before);
  });
});
