import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planRepartition } from '@sluice/state';
import { BatchTransaction } from '../checkpoint/BatchTransaction.js';
import { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { commitOf } from '../checkpoint/recovery.js';
import { contiguousLayout, readStateLayout, writeStateLayout } from '../checkpoint/StateLayoutFile.js';
import { allShardMarkers, repartitionCommit, runControlBatch, shardMarkersOf, type RepartitionControl } from './Repartition.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('shard markers in the commit log, by operator id', () => {
  it('a commit of an earlier Sluice (stateShardMarkers, downstreamShardMarkers) reads as one list', () => {
    const old = commitOf({ nextBatchWatermarkMs: 5, stateShardMarkers: [3, 2], downstreamShardMarkers: [[3], [1, 3]] });
    expect(allShardMarkers(old)).toEqual([[3, 2], [3], [1, 3]]);
    expect(shardMarkersOf(old, 2)).toEqual([1, 3]);
    expect(shardMarkersOf({ nextBatchWatermarkMs: 0 }, 0)).toBeUndefined();
  });

  it("a repartition of one operator writes its new markers and keeps the others', from either form", () => {
    const old = commitOf({ nextBatchWatermarkMs: 5, nextWakeMs: 9, stateShardMarkers: [3, 2], downstreamShardMarkers: [[3]] });
    expect(repartitionCommit(old, 1, [4, 4, 4])).toEqual({
      nextBatchWatermarkMs: 5,
      nextWakeMs: 9,
      shardMarkers: [
        [3, 2],
        [4, 4, 4],
      ],
    });
    const current = { nextBatchWatermarkMs: 5, shardMarkers: [[3, 2], [3]] };
    expect(repartitionCommit(current, 0, [4])).toEqual({ nextBatchWatermarkMs: 5, shardMarkers: [[4], [3]] });
    // A shard whose marker could not be read leaves its operator unknown, the others still checked.
    expect(repartitionCommit(current, 0, [4, null])).toEqual({ nextBatchWatermarkMs: 5, shardMarkers: [null, [3]] });
    expect(shardMarkersOf(repartitionCommit(current, 0, [4, null]), 0)).toBeUndefined();
  });
});

describe('a REPARTITION control batch through the transaction', () => {
  it("leaves the moved operator's new layout in the tail's layouts, whichever operator it is, and the others' as they were", async () => {
    const paths = new CheckpointPaths(mkdtempSync(join(tmpdir(), 'sluice-repartition-')));
    dirs.push(paths.root);
    const counts = (partitions: number, shards: number) => ({ keyGroups: 64, partitions, shards });
    const layouts = [contiguousLayout(counts(4, 2)), { ...contiguousLayout(counts(4, 2)), operator: 'dedupe' }, contiguousLayout(counts(6, 3))];
    for (const [id, layout] of layouts.entries()) writeStateLayout(paths.stateLayout(id), layout);
    const txn = new BatchTransaction(paths, { retain: 100 }, { ...BatchTransaction.readTail(paths), layouts });
    const to = planRepartition(layouts[1] as (typeof layouts)[1], counts(2, 1)).layout;
    const control: RepartitionControl = { type: 'REPARTITION', operatorId: 1, from: layouts[1] as (typeof layouts)[1], to };
    const store = { cacheBytes: 1 << 20, writeBufferBytes: 1 << 20, maxOpenFiles: 100 };
    await runControlBatch(txn, { batchId: 0, control }, 1, store);
    await txn.settled();
    expect(txn.tail.layouts).toEqual([layouts[0], { ...to, operator: 'dedupe' }, layouts[2]]);
    // As its layout file now holds it.
    expect(readStateLayout(paths.stateLayout(1))).toEqual({ ...to, operator: 'dedupe' });
    expect(txn.tail).toMatchObject({ committed: true, last: { batchId: 0, kind: 'control' } });
  });
});
