import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ShardRegistry } from './ShardRegistry.js';
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
    if (!v) volumes.set(dir, (v = new MemoryVolume(dir)));
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
