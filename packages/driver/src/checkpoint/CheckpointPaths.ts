/** Every path inside a checkpoint is built here, never formatted by hand elsewhere. */
import { join } from 'node:path';

export class CheckpointPaths {
  constructor(readonly root: string) {}

  get metadata(): string {
    return join(this.root, 'metadata');
  }
  get offsets(): string {
    return join(this.root, 'offsets');
  }
  get commits(): string {
    return join(this.root, 'commits');
  }
  get lock(): string {
    return join(this.root, '.lock');
  }
  /** Source `index`'s own log (a file source's seen-file log lives in it). */
  source(index: number): string {
    return join(this.root, 'sources', String(index));
  }
  /** Where a rate source keeps the time it started at. */
  rateStart(index: number): string {
    return join(this.source(index), 'metadata');
  }
  /** Where a Redis source keeps the offsets it started from (`latest` means the same after a restart). */
  redisStart(index: number): string {
    return join(this.source(index), 'initial');
  }
  state(operatorId: number): string {
    return join(this.root, 'state', String(operatorId));
  }
  /** The operator's state layout file: partitions, shards and which shard holds each partition. */
  stateLayout(operatorId: number): string {
    return join(this.state(operatorId), 'layout');
  }
  /** A processor's state variables and their types (transformWithState, flatMapGroupsWithState). */
  stateSchema(operatorId: number): string {
    return join(this.state(operatorId), 'schema');
  }
  shard(operatorId: number, shard: number): string {
    return join(this.state(operatorId), `shard-${shard}`);
  }
}
