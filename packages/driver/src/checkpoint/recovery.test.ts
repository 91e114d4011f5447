import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointPaths } from './CheckpointPaths.js';
import { checkTail, commitOf, storedLayouts } from './recovery.js';
import { contiguousLayout, writeStateLayout } from './StateLayoutFile.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function checkpoint(): CheckpointPaths {
  const d = mkdtempSync(join(tmpdir(), 'sluice-recovery-'));
  dirs.push(d);
  return new CheckpointPaths(d);
}

describe('checkTail', () => {
  it('takes an empty checkpoint, a committed last batch, and one uncommitted batch', () => {
    expect(() => checkTail(undefined, undefined, '/c/offsets')).not.toThrow();
    expect(() => checkTail(3, 3, '/c/offsets')).not.toThrow();
    expect(() => checkTail(4, 3, '/c/offsets')).not.toThrow();
    expect(() => checkTail(0, undefined, '/c/offsets')).not.toThrow();
  });

  it('refuses a commit log ahead of the offset log, or with entries the offset log lacks', () => {
    expect(() => checkTail(1, 2, '/c/offsets')).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: '/c/offsets' }));
    expect(() => checkTail(undefined, 0, '/c/offsets')).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', message: expect.stringContaining('offset log is empty') }),
    );
  });

  it('refuses a commit log more than one batch behind the offset log', () => {
    expect(() => checkTail(5, 3, '/c/offsets')).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: '/c/offsets', message: expect.stringContaining('2 batches behind') }),
    );
    expect(() => checkTail(2, undefined, '/c/offsets')).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT' }));
  });
});

describe('commitOf', () => {
  it("reads a commit of an earlier Sluice's form (the first operator's markers apart) as markers by operator id", () => {
    expect(commitOf({ nextBatchWatermarkMs: 5, nextWakeMs: 9, stateShardMarkers: [3, 2], downstreamShardMarkers: [[3], [1, 3]] })).toEqual({
      nextBatchWatermarkMs: 5,
      nextWakeMs: 9,
      shardMarkers: [[3, 2], [3], [1, 3]],
    });
    expect(commitOf({ nextBatchWatermarkMs: 5, stateShardMarkers: [3] })).toEqual({ nextBatchWatermarkMs: 5, shardMarkers: [[3]] });
  });

  it('keeps a commit with markers by operator id, or with none, as it is', () => {
    expect(commitOf({ nextBatchWatermarkMs: 5, shardMarkers: [null, [3]] })).toEqual({ nextBatchWatermarkMs: 5, shardMarkers: [null, [3]] });
    expect(commitOf({ nextBatchWatermarkMs: 0 })).toEqual({ nextBatchWatermarkMs: 0 });
  });
});

describe('storedLayouts', () => {
  const counts = (partitions: number, shards: number) => ({ keyGroups: 64, partitions, shards });

  it("reads every operator's layout file by operator id, up to the first operator without one", () => {
    const paths = checkpoint();
    expect(storedLayouts(paths, undefined)).toEqual([]);
    const first = { ...contiguousLayout(counts(8, 2)), operator: 'stateStoreSave' };
    const second = contiguousLayout(counts(6, 3));
    writeStateLayout(paths.stateLayout(0), first);
    writeStateLayout(paths.stateLayout(1), second);
    writeStateLayout(paths.stateLayout(3), contiguousLayout(counts(4, 1)));
    expect(storedLayouts(paths, undefined)).toEqual([first, second]);
  });

  it("takes the first operator's layout from where an earlier Sluice pinned it in metadata, unless its layout file exists", () => {
    const paths = checkpoint();
    expect(storedLayouts(paths, counts(8, 2))).toEqual([contiguousLayout(counts(8, 2))]);
    writeStateLayout(paths.stateLayout(1), contiguousLayout(counts(6, 3)));
    expect(storedLayouts(paths, counts(8, 2))).toEqual([contiguousLayout(counts(8, 2)), contiguousLayout(counts(6, 3))]);
    writeStateLayout(paths.stateLayout(0), contiguousLayout(counts(4, 4)));
    expect(storedLayouts(paths, counts(8, 2))).toEqual([contiguousLayout(counts(4, 4)), contiguousLayout(counts(6, 3))]);
  });
});
