/**
 * The driver's side of a shuffle: every map task's blocks, gathered by reduce partition. The
 * exchange holds them until the reduce stage is done, so a retried reduce task reads them again;
 * blocks live in shared memory, so handing them on copies nothing.
 */
import type { ShuffleBlock } from '@sluice/executor';

export class ShuffleExchange {
  private readonly byPartition = new Map<number, ShuffleBlock[]>();

  /** Takes the blocks of the map stage's results. */
  constructor(mapOutputs: ReadonlyArray<{ blocks: readonly ShuffleBlock[] }>) {
    for (const r of mapOutputs) {
      for (const b of r.blocks) {
        const list = this.byPartition.get(b.partition);
        if (list) list.push(b);
        else this.byPartition.set(b.partition, [b]);
      }
    }
  }

  /** The blocks of the given reduce partitions, in partition order then map-task order. */
  blocksOf(partitions: readonly number[]): ShuffleBlock[] {
    return partitions.flatMap((p) => this.byPartition.get(p) ?? []);
  }
}
