import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runShardStoreConformance } from './shardStoreConformance.js';
import { LEVELDB_MIN_WRITE_BUFFER_BYTES, openLevelShard } from './LevelShardStore.js';
import { META_KEY, dataKey } from './layout.js';
import type { ShardOptions } from './ShardStore.js';

const opts: ShardOptions = { cacheBytes: 1 << 20, writeBufferBytes: 4 << 20, maxOpenFiles: 100 };
const root = mkdtempSync(join(tmpdir(), 'sluice-level-shard-'));
let n = 0;
const newDir = () => join(root, `shard-${n++}`);

afterAll(() => rmSync(root, { recursive: true, force: true }));

runShardStoreConformance('LevelShardStore', {
  newLocation: newDir,
  open: (dir) => openLevelShard(dir, opts),
  bigStateKeys: 1_000_000,
  bigStateTimeoutMs: 180_000,
});

// Every commit through the changelog, however small (by default small ones skip it).
const changelogOpts: ShardOptions = { ...opts, changelog: true, changelogMinBytes: 0 };
runShardStoreConformance('LevelShardStore with changelog checkpointing', {
  newLocation: newDir,
  open: (dir) => openLevelShard(dir, changelogOpts),
  bigStateKeys: 200_000,
  bigStateTimeoutMs: 120_000,
});

const k = (s: string) => dataKey(0, new TextEncoder().encode(s));
const v = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('utf8'));

describe('LevelShardStore', () => {
  it('reports STATE_STORE_CORRUPT naming the directory when LevelDB cannot open it', async () => {
    const dir = newDir();
    const s = await openLevelShard(dir, opts);
    await s.commit(0, [{ key: k('a'), value: v('1'), prior: null }], 1, 0);
    await s.close();
    for (const f of readdirSync(dir)) if (f.startsWith('MANIFEST-')) writeFileSync(join(dir, f), 'not a manifest');
    await expect(openLevelShard(dir, opts)).rejects.toMatchObject({ code: 'STATE_STORE_CORRUPT', file: dir });
  });

  it('reports a torn meta record as STATE_STORE_CORRUPT and a newer format as STATE_STORE_INCOMPATIBLE', async () => {
    for (const [bytes, code] of [
      [new Uint8Array([1, 2, 3]), 'STATE_STORE_CORRUPT'],
      [new Uint8Array(17).fill(9), 'STATE_STORE_INCOMPATIBLE'],
    ] as const) {
      const dir = newDir();
      const db = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
      await db.put(META_KEY, bytes);
      await db.close();
      await expect(openLevelShard(dir, opts)).rejects.toMatchObject({ code, file: dir });
      // The failed open released the lock.
      const again = new ClassicLevel(dir);
      await again.open();
      await again.close();
    }
  });

  it('refuses a file-handle share below what LevelDB uses with INVALID_CONF', async () => {
    await expect(openLevelShard(newDir(), { ...opts, maxOpenFiles: 20 })).rejects.toMatchObject({
      code: 'INVALID_CONF',
      option: 'sluice.sql.streaming.stateStore.maxOpenFiles',
    });
  });

  it('reports the cache and write buffer it was allotted as its memory', async () => {
    const s = await openLevelShard(newDir(), { cacheBytes: 3 << 20, writeBufferBytes: 2 << 20, maxOpenFiles: 80 });
    expect(s.memoryUsedBytes()).toBe(5 << 20);
    await s.close();
    const small = await openLevelShard(newDir(), { cacheBytes: 0, writeBufferBytes: 1000, maxOpenFiles: 80 });
    expect(small.memoryUsedBytes()).toBe(LEVELDB_MIN_WRITE_BUFFER_BYTES);
    await small.close();
  });
});

// Workers and child processes load the built JavaScript (`pnpm test` builds first).
const distIndex = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const srcDir = fileURLToPath(new URL('.', import.meta.url));

/** The bundle (scripts/build.mjs) must be newer than every source file it holds. */
function checkDistFresh(): void {
  for (const f of readdirSync(srcDir)) {
    if (!f.endsWith('.ts') || f.endsWith('.test.ts')) continue;
    if (!existsSync(distIndex) || statSync(distIndex).mtimeMs + 1000 < statSync(join(srcDir, f)).mtimeMs) {
      throw new Error(`packages/state/dist/index.js is missing or older than src/${f}: run \`pnpm build\` first`);
    }
  }
}

const lib = pathToFileURL(distIndex).href;

function runWorker(data: Record<string, unknown>, code: string): Promise<{ messages: unknown[]; exitCode: number }> {
  return new Promise((resolve, reject) => {
    const messages: unknown[] = [];
    const w = new Worker(code, { eval: true, workerData: { lib, opts, ...data } });
    w.on('message', (m) => messages.push(m));
    w.on('error', reject);
    w.on('exit', (exitCode) => resolve({ messages, exitCode }));
  });
}

function runNode(code: string, env: Record<string, string>): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe('LevelShardStore across threads and processes', () => {
  beforeAll(checkDistFresh);

  it('survives a worker that commits and exits without closing; a new worker reopens it', async () => {
    const dir = newDir();
    const writer = `
      const { workerData, parentPort } = require('node:worker_threads');
      (async () => {
        const lib = await import(workerData.lib);
        const s = await lib.openLevelShard(workerData.dir, workerData.opts);
        const key = lib.dataKey(3, new TextEncoder().encode('k'));
        await s.commit(1, [{ key, value: new TextEncoder().encode('v1'), prior: null }], 1, 0);
        parentPort.postMessage('committed');
        process.exit(0);
      })().catch((e) => { console.error(e); process.exit(2); });`;
    const first = await runWorker({ dir }, writer);
    expect(first.exitCode).toBe(0);

    const reader = `
      const { workerData, parentPort } = require('node:worker_threads');
      (async () => {
        const lib = await import(workerData.lib);
        const s = await lib.openLevelShard(workerData.dir, workerData.opts);
        const [value] = await s.getMany([lib.dataKey(3, new TextEncoder().encode('k'))]);
        parentPort.postMessage({ marker: s.marker, numRows: s.numRows, value: Buffer.from(value).toString() });
        await s.close();
      })().catch((e) => { parentPort.postMessage({ error: String(e && e.code) }); });`;
    const second = await runWorker({ dir }, reader);
    expect(second.messages).toEqual([{ marker: 1, numRows: 1, value: 'v1' }]);
  });

  const script = (dir: string, body: string, o: ShardOptions = opts) => `
    const lib = await import(${JSON.stringify(lib)});
    const s = await lib.openLevelShard(${JSON.stringify(dir)}, ${JSON.stringify(o)});
    const k = (x) => lib.dataKey(0, new TextEncoder().encode(x));
    const v = (x) => new TextEncoder().encode(x);
    ${body}
    await s.close();`;

  it('dies at after-state-commit with the commit durable', async () => {
    const dir = newDir();
    const r = await runNode(
      script(
        dir,
        `await s.commit(1, [{ key: k('a'), value: v('1'), prior: null }], 1, 0);
         await s.commit(2, [{ key: k('a'), value: v('2'), prior: v('1') }], 0, 0);
         await s.commit(3, [{ key: k('a'), value: v('3'), prior: v('2') }], 0, 0);`,
      ),
      { SLUICE_FAULT: 'after-state-commit:2' },
    );
    expect(r.signal, r.stderr).toBe('SIGKILL');
    const s = await openLevelShard(dir, opts);
    expect(s.marker).toBe(2);
    expect(text((await s.getMany([k('a')]))[0])).toBe('2');
    // The replay of batch 2 starts from batch 1's state.
    expect(await s.rollbackIfAt(2)).toBe(true);
    expect(text((await s.getMany([k('a')]))[0])).toBe('1');
    await s.close();
  });

  it('dies at mid-rollback with nothing rolled back, and the rollback can be redone', async () => {
    const dir = newDir();
    const r = await runNode(
      script(
        dir,
        `await s.commit(1, [{ key: k('a'), value: v('1'), prior: null }], 1, 0);
         await s.commit(2, [{ key: k('a'), value: v('2'), prior: v('1') }, { key: k('b'), value: v('b'), prior: null }], 1, 0);
         await s.rollbackIfAt(2);`,
      ),
      { SLUICE_FAULT: 'mid-rollback' },
    );
    expect(r.signal, r.stderr).toBe('SIGKILL');
    const s = await openLevelShard(dir, opts);
    expect(s.marker).toBe(2);
    expect(s.numRows).toBe(2);
    expect((await s.getMany([k('a'), k('b')])).map(text)).toEqual(['2', 'b']);
    expect(await s.rollbackIfAt(2)).toBe(true);
    expect(s.marker).toBe(1);
    expect(s.numRows).toBe(1);
    expect((await s.getMany([k('a'), k('b')])).map(text)).toEqual(['1', undefined]);
    await s.close();
  });

  const threeCommits = `await s.commit(1, [{ key: k('a'), value: v('1'), prior: null }], 1, 0);
     await s.commit(2, [{ key: k('a'), value: v('2'), prior: v('1') }], 0, 0);
     await s.commit(3, [{ key: k('a'), value: v('3'), prior: v('2') }], 0, 0);`;

  it('with changelog checkpointing, dies after the changelog write and before LevelDB has the commit, which the next open applies', async () => {
    const dir = newDir();
    const r = await runNode(script(dir, threeCommits, changelogOpts), { SLUICE_FAULT: 'after-state-commit:2' });
    expect(r.signal, r.stderr).toBe('SIGKILL');
    // LevelDB alone is at batch 1: the commit of batch 2 lives in the changelog only.
    const raw = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    expect(text(await raw.get(k('a')))).toBe('1');
    await raw.close();
    for (const o of [opts, changelogOpts]) {
      const s = await openLevelShard(dir, o);
      expect(s.marker).toBe(2);
      expect(text((await s.getMany([k('a')]))[0])).toBe('2');
      await s.close();
    }
    const s = await openLevelShard(dir, changelogOpts);
    expect(await s.rollbackIfAt(2)).toBe(true);
    expect(text((await s.getMany([k('a')]))[0])).toBe('1');
    await s.close();
  });

  it('ignores a torn changelog record, and one that does not follow what LevelDB holds', async () => {
    const torn = newDir();
    await runNode(script(torn, threeCommits, changelogOpts), { SLUICE_FAULT: 'after-state-commit:2' });
    const file = join(torn, 'sluice-changelog');
    truncateSync(file, statSync(file).size - 1);
    const s = await openLevelShard(torn, changelogOpts);
    expect(s.marker).toBe(1);
    expect(text((await s.getMany([k('a')]))[0])).toBe('1');
    await s.close();

    // A record written after batch 2, on a LevelDB that lost batch 2 as well (at batch 1): no hole.
    const behind = newDir();
    await runNode(script(behind, threeCommits, changelogOpts), { SLUICE_FAULT: 'after-state-commit:3' });
    const before2 = newDir();
    await runNode(script(before2, threeCommits, opts), { SLUICE_FAULT: 'after-state-commit:1' });
    copyFileSync(join(behind, 'sluice-changelog'), join(before2, 'sluice-changelog'));
    const t = await openLevelShard(before2, changelogOpts);
    expect(t.marker).toBe(1);
    await t.close();
  });

  it('with changelog checkpointing, a close does not wait for LevelDB to catch up: the next open applies the record', async () => {
    const dir = newDir();
    const s = await openLevelShard(dir, changelogOpts);
    await s.commit(0, [{ key: k('a'), value: v('0'), prior: null }], 1, 0);
    // Over 4 MB of changes: the record reaches LevelDB in several pieces.
    const many = Array.from({ length: 60_000 }, (_, i) => ({ key: k(`key-${i}`), value: v(`value-${i}-${'x'.repeat(40)}`), prior: null }));
    await s.commit(1, [{ key: k('a'), value: v('1'), prior: v('0') }, ...many], many.length, 0);
    await s.close();
    const raw = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    expect(text(await raw.get(k('a')))).toBe('0');
    await raw.close();
    const t = await openLevelShard(dir, changelogOpts);
    expect(t.marker).toBe(1);
    expect(t.numRows).toBe(1 + many.length);
    expect((await t.getMany([k('a'), k('key-59999')])).map(text)).toEqual(['1', `value-59999-${'x'.repeat(40)}`]);
    await t.close();
  });

  it('a settled close (a query that stopped) waits for LevelDB to catch up and flushes its memtable: the next open replays nothing', async () => {
    const dir = newDir();
    const s = await openLevelShard(dir, changelogOpts);
    const many = Array.from({ length: 60_000 }, (_, i) => ({ key: k(`key-${i}`), value: v(`value-${i}-${'x'.repeat(40)}`), prior: null }));
    await s.commit(0, many, many.length, 0);
    await s.close({ settle: true });
    // LevelDB itself holds the commit, in table files: no changelog record and no log left to replay
    // (looked at before anything opens the directory again: an open would replay a log itself).
    const logs = readdirSync(dir).filter((f) => f.endsWith('.log'));
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.map((f) => statSync(join(dir, f)).size)).toEqual(logs.map(() => 0));
    const changelog = readdirSync(dir).filter((f) => f.includes('changelog'));
    expect(changelog.map((f) => statSync(join(dir, f)).size)).toEqual(changelog.map(() => 0));
    const raw = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    expect(text(await raw.get(k('key-59999')))).toBe(`value-59999-${'x'.repeat(40)}`);
    await raw.close();
  });
});
