/**
 * The partitioner of a shuffle's map side: each record's canonical key bytes hash (murmur3-32,
 * @sluice/state) to a key group, the key group's contiguous range names its partition, and the
 * records of a partition are gathered into one block (record layouts in shuffleCodec.ts).
 */
import { encodeKey, keyGroupOf, partitionOfKeyGroup, type KeyType } from '@sluice/state';
import type { AggBuffer } from '../operators/aggregates.js';
import type { ShuffleBlock, StateLayoutMsg } from '../task/messages.js';
import { AggregateBlockWriter, encodeBlock, encodeGroupBlock, type DedupRecord, type GroupRecord } from './shuffleCodec.js';
import type { Row } from '../schema/types.js';

export class ShuffleWriter {
  private readonly aggregation = new Map<number, AggregateBlockWriter>();
  private readonly dedup = new Map<number, DedupRecord[]>();
  private readonly groups = new Map<number, GroupRecord[]>();

  /** `routeKeys`: the leading keys whose encoding alone chooses the key group (all by default). */
  constructor(
    private readonly layout: StateLayoutMsg,
    private readonly keyTypes: readonly KeyType[],
    private readonly routeKeys = keyTypes.length,
  ) {}

  private route(values: unknown[]): { keyBytes: Uint8Array; keyGroup: number; partition: number } {
    const keyBytes = encodeKey(values, this.keyTypes);
    const n = this.routeKeys;
    const routed = n === values.length ? keyBytes : encodeKey(values.slice(0, n), this.keyTypes.slice(0, n));
    const keyGroup = keyGroupOf(routed, this.layout.keyGroups);
    return { keyBytes, keyGroup, partition: partitionOfKeyGroup(keyGroup, this.layout) };
  }

  /** One aggregation partial: its key values, event time (null: none) and buffers. */
  addAggregate(values: unknown[], eventTimeMs: number | null, buffers: readonly AggBuffer[]): void {
    const { keyBytes, keyGroup, partition } = this.route(values);
    let w = this.aggregation.get(partition);
    if (w === undefined) {
      w = new AggregateBlockWriter();
      this.aggregation.set(partition, w);
    }
    w.add(keyGroup, keyBytes, eventTimeMs, buffers);
  }

  /** The block writer of the partition that owns key group `keyGroup` (records written in place). */
  aggregateBlockOf(keyGroup: number): AggregateBlockWriter {
    const partition = partitionOfKeyGroup(keyGroup, this.layout);
    let w = this.aggregation.get(partition);
    if (w === undefined) {
      w = new AggregateBlockWriter();
      this.aggregation.set(partition, w);
    }
    return w;
  }

  get keyGroups(): number {
    return this.layout.keyGroups;
  }

  /** One deduplication record, built once its key's bytes and key group are known. */
  addDedup(values: unknown[], record: (keyBytes: Uint8Array, keyGroup: number) => DedupRecord): void {
    const { keyBytes, keyGroup, partition } = this.route(values);
    this.push(partition, record(keyBytes, keyGroup));
  }

  /** A processor's rows of one key (transformWithState). */
  addGroup(values: unknown[], rows: Row[]): void {
    const { keyBytes, keyGroup, partition } = this.route(values);
    let records = this.groups.get(partition);
    if (records === undefined) {
      records = [];
      this.groups.set(partition, records);
    }
    records.push([keyGroup, keyBytes, rows]);
  }

  private push(partition: number, record: DedupRecord): void {
    let records = this.dedup.get(partition);
    if (records === undefined) {
      records = [];
      this.dedup.set(partition, records);
    }
    records.push(record);
  }

  /** One block per partition that has records, in partition order. */
  finish(): ShuffleBlock[] {
    return [...this.aggregation.keys(), ...this.dedup.keys(), ...this.groups.keys()]
      .sort((a, b) => a - b)
      .map((partition) => {
        const groups = this.groups.get(partition);
        return { partition, data: groups ? encodeGroupBlock(groups) : (this.aggregation.get(partition)?.finish() ?? encodeBlock(this.dedup.get(partition)!)) };
      });
  }
}
