import { describe, expect, it } from 'vitest';
import { allShardMarkers, repartitionCommit, shardMarkersOf } from './Repartition.js';

describe('shard markers in the commit log, by operator id', () => {
  it('a commit of an earlier Sluice (stateShardMarkers, downstreamShardMarkers) reads as one list', () => {
    const old = { nextBatchWatermarkMs: 5, stateShardMarkers: [3, 2], downstreamShardMarkers: [[3], [1, 3]] };
    expect(allShardMarkers(old)).toEqual([[3, 2], [3], [1, 3]]);
    expect(shardMarkersOf(old, 2)).toEqual([1, 3]);
    expect(shardMarkersOf({ nextBatchWatermarkMs: 0 }, 0)).toBeUndefined();
  });

  it("a repartition of one operator writes its new markers and keeps the others', from either form", () => {
    const old = { nextBatchWatermarkMs: 5, nextWakeMs: 9, stateShardMarkers: [3, 2], downstreamShardMarkers: [[3]] };
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
