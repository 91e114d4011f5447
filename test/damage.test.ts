/**
 * Damage is detected, never silently replaced: a checkpoint, its state or its sink that lost a
 * part is refused at the restart with a code naming what is missing, instead of a query that runs
 * on empty state, reads a batch twice, or writes rows nobody can read back.
 */
import { existsSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Trigger, window } from '@sluice/driver';
import { dataRange, openLevelShard } from '@sluice/state';
import { jsonLines, readSinkJson, tempDir, useSession, writeInput } from './helpers.js';

const MIN = 60_000;
const T0 = Date.UTC(2024, 0, 1);

const session = useSession({ 'sluice.sql.shuffle.partitions': 4, 'sluice.sql.streaming.stateStore.shards': 2 });

interface Dirs {
  input: string;
  out: string;
  ckpt: string;
}

/** Input files f<i>.json, one minute of events each (ids a..c), in modification-time order. */
function writeMinutes(input: string, from: number, to: number): void {
  for (let m = from; m < to; m++) {
    const rows = ['a', 'b', 'c'].map((id) => ({ id, t: new Date(T0 + m * MIN).toISOString() }));
    writeInput(input, `f${String(m).padStart(2, '0')}.json`, jsonLines(rows), 1000 + m);
  }
}

function dirs(): Dirs {
  const root = tempDir('sluice-damage-');
  return { input: join(root, 'in'), out: join(root, 'out'), ckpt: join(root, 'ckpt') };
}

/** A windowed count (5-minute windows, 10-minute watermark) over the files, one file a batch. */
function windowed(d: Dirs) {
  return session()
    .readStream.format('json')
    .schema('id STRING, t TIMESTAMP')
    .option('maxFilesPerTrigger', 1)
    .load(d.input)
    .withWatermark('t', '10 minutes')
    .groupBy(window('t', '5 minutes'), 'id')
    .count()
    .writeStream.format('json')
    .option('checkpointLocation', d.ckpt)
    .outputMode('append')
    .trigger(Trigger.AvailableNow())
    .start(d.out);
}

/** A stateless copy of the files, one file a batch. */
function copying(d: Dirs, sink = d.out, ckpt = d.ckpt) {
  return session()
    .readStream.format('json')
    .schema('id STRING, t TIMESTAMP')
    .option('maxFilesPerTrigger', 1)
    .load(d.input)
    .writeStream.format('json')
    .option('checkpointLocation', ckpt)
    .trigger(Trigger.AvailableNow())
    .start(sink);
}

async function runToEnd(start: () => ReturnType<typeof windowed>): Promise<void> {
  const q = await start();
  await q.awaitTermination();
  expect(q.exception).toBeNull();
}

/** Runs the windowed query over 12 minutes, so that open windows sit in state, and returns its dirs. */
async function stateAtRest(): Promise<Dirs> {
  const d = dirs();
  writeMinutes(d.input, 0, 12);
  await runToEnd(() => windowed(d));
  writeMinutes(d.input, 12, 14);
  return d;
}

async function restartFails(start: () => ReturnType<typeof windowed>): Promise<{ code?: string; file?: string; message?: string }> {
  try {
    const q = await start();
    const ended = await q.awaitTermination(30_000);
    if (!ended) await q.stop();
    return { code: ended ? 'NONE' : 'STILL RUNNING AFTER 30 S' };
  } catch (e) {
    return e as { code?: string; file?: string; message?: string };
  }
}

describe('damaged state', () => {
  it('a deleted shard directory is STATE_STORE_CORRUPT naming the shard and the batch it lacks', async () => {
    const d = await stateAtRest();
    const shard = join(d.ckpt, 'state', '0', 'shard-1');
    rmSync(shard, { recursive: true });
    const e = await restartFails(() => windowed(d));
    expect(e.code).toBe('STATE_STORE_CORRUPT');
    expect(e.file).toBe(shard);
    expect(e.message).toMatch(/holds no commit at all, but the checkpoint's commit log says it committed batch \d+/);
  });

  it('a deleted state/ directory is STATE_STORE_CORRUPT', async () => {
    const d = await stateAtRest();
    rmSync(join(d.ckpt, 'state'), { recursive: true });
    const e = await restartFails(() => windowed(d));
    expect(e.code).toBe('STATE_STORE_CORRUPT');
  });

  it('a shard whose newest LevelDB file lost its second half is STATE_STORE_CORRUPT, and no window is emitted twice', async () => {
    const d = await stateAtRest();
    const before = readSinkJson(d.out).length;
    const shard = join(d.ckpt, 'state', '0', 'shard-0');
    // A stopped query's shards are settled: the last commits sit in the newest table file, not in a
    // log (which a killed one leaves, and which the next open would replay).
    const files = readdirSync(shard).filter((n) => /^\d+\.(log|ldb)$/.test(n) && statSync(join(shard, n)).size > 0);
    const newest = files.sort((x, y) => Number.parseInt(x, 10) - Number.parseInt(y, 10)).at(-1) as string;
    expect(newest).toMatch(/\.ldb$/);
    const path = join(shard, newest);
    truncateSync(path, Math.floor(statSync(path).size / 2));
    const e = await restartFails(() => windowed(d));
    expect(e.code).toBe('STATE_STORE_CORRUPT');
    expect(e.file).toBe(shard);
    expect(readSinkJson(d.out)).toHaveLength(before);
  });

  it('a state value of no known format is STATE_STORE_CORRUPT naming its shard, and no window is emitted twice', async () => {
    const d = await stateAtRest();
    const before = readSinkJson(d.out).length;
    const shards = [0, 1].map((s) => join(d.ckpt, 'state', '0', `shard-${s}`));
    for (const dir of shards) {
      const store = await openLevelShard(dir, { cacheBytes: 1 << 20, writeBufferBytes: 1 << 20, maxOpenFiles: 100 });
      try {
        const [gte, lt] = dataRange();
        // A value header whose flags no version writes.
        const values = (await store.range(gte, lt)).map(([key]) => ({ type: 'put' as const, key, value: Uint8Array.of(0xf5, 1, 1, 3) }));
        expect(values.length).toBeGreaterThan(0);
        await store.applyMove(values, 0);
      } finally {
        await store.close();
      }
    }
    const e = await restartFails(() => windowed(d));
    expect(e.code).toBe('STATE_STORE_CORRUPT');
    expect(shards).toContain(e.file);
    expect(e.message).toMatch(/^state shard .*shard-[01]: a state value has a damaged header \(flags 3, 4 bytes\)/);
    expect(readSinkJson(d.out)).toHaveLength(before);
  });
});

describe('a damaged checkpoint or sink', () => {
  it('a deleted sources/0/N is CHECKPOINT_CORRUPT naming it, in the middle of the log or at its end', async () => {
    const d = dirs();
    writeMinutes(d.input, 0, 4);
    await runToEnd(() => copying(d));
    writeMinutes(d.input, 4, 5);
    const log = join(d.ckpt, 'sources', '0');
    rmSync(join(log, '3'));
    expect(await restartFails(() => copying(d))).toMatchObject({ code: 'CHECKPOINT_CORRUPT', file: join(log, '3') });
    rmSync(join(log, '1'));
    expect(await restartFails(() => copying(d))).toMatchObject({ code: 'CHECKPOINT_CORRUPT', file: join(log, '1') });
    expect(readSinkJson(d.out)).toHaveLength(12); // nothing was read twice
  });

  it('a deleted sink manifest is SINK_CORRUPT at the restart and when the sink is read', async () => {
    const d = dirs();
    writeMinutes(d.input, 0, 5);
    await runToEnd(() => copying(d));
    const last = join(d.out, '_sluice_metadata', '4');
    const middle = join(d.out, '_sluice_metadata', '2');
    rmSync(last);
    expect(await restartFails(() => copying(d))).toMatchObject({ code: 'SINK_CORRUPT', file: last });
    rmSync(middle);
    expect(await restartFails(() => copying(d))).toMatchObject({ code: 'SINK_CORRUPT', file: middle });
    // Reading it (schema inference reads the manifests first) finds the gap too.
    await expect((async () => session().read.format('json').load(d.out).collect())()).rejects.toMatchObject({ code: 'SINK_CORRUPT', file: middle });
  });

  it('a second query writing into a sink directory is SINK_OWNED_BY_ANOTHER_QUERY', async () => {
    const d = dirs();
    writeMinutes(d.input, 0, 2);
    await runToEnd(() => copying(d));
    const other = join(tempDir(), 'other-ckpt');
    expect(await restartFails(() => copying(d, d.out, other))).toMatchObject({
      code: 'SINK_OWNED_BY_ANOTHER_QUERY',
      file: join(d.out, '_sluice_metadata', 'owner'),
    });
    expect(existsSync(join(other, 'offsets'))).toBe(false); // refused before any batch
    expect(readSinkJson(d.out)).toHaveLength(6);
  });

  it('a checkpoint of a json source reused by a rate source is CHECKPOINT_INCOMPATIBLE', async () => {
    const d = dirs();
    writeMinutes(d.input, 0, 1);
    await runToEnd(() => copying(d));
    const e = await restartFails(() =>
      session().readStream.format('rate').load().writeStream.format('memory').queryName('reused').option('checkpointLocation', d.ckpt).start(),
    );
    expect(e).toMatchObject({ code: 'CHECKPOINT_INCOMPATIBLE', file: join(d.ckpt, 'metadata') });
    expect(e.message).toContain('json source');
  });
});
