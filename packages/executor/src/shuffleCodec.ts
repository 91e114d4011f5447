/**
 * The shuffle between the map and the reduce side of a stateful batch. A map task sends one block
 * per partition (ShuffleBlock in messages.ts); a block's data is msgpack (records on: row objects
 * and window structs of one shape share one field list) of an array of records, one per state key
 * the task saw, each a plain array:
 *
 *   aggregate      [keyGroup, keyBytes, keyValues, buffers]
 *   deduplication  [keyGroup, keyBytes, keyValues, row, eventTimeMs]
 *
 *   keyGroup     keyGroupOf(keyBytes, layout.keyGroups); partitionOfKeyGroup(keyGroup) is the
 *                block's partition
 *   keyBytes     encodeKey(keyValues, key types) from @sluice/state: the canonical key, byte-equal
 *                for equal keys whichever task produced them; decoded as a view into the block
 *   keyValues    the key in engine form, one value per key column (a window is {start, end} in ms)
 *   buffers      one partial aggregation buffer per AggSpec, in order (aggregates.ts)
 *   row          the first row of the key in this task, in engine form (the schema entering the
 *                operator)
 *   eventTimeMs  that row's event time, or null without an event-time column or when it is null
 *
 * A task sends each key at most once, but several tasks send the same key: the reduce side merges
 * aggregate records with equal keyBytes and keeps one deduplication record per key.
 */
import { Packr } from 'msgpackr';
import type { AggBuffer } from './aggregates.js';
import type { Row } from './types.js';

export type AggregateRecord = [keyGroup: number, keyBytes: Uint8Array, keyValues: unknown[], buffers: AggBuffer[]];
export type DedupRecord = [keyGroup: number, keyBytes: Uint8Array, keyValues: unknown[], row: Row, eventTimeMs: number | null];
export type ShuffleRecord = AggregateRecord | DedupRecord;

const packr = new Packr({ useRecords: true, moreTypes: false });

/**
 * Encodes a block into its own exactly-sized buffer: msgpackr returns views into a shared scratch
 * buffer, and a view crossing threads would clone (or transfer) the whole of that buffer.
 */
export function encodeBlock(records: readonly ShuffleRecord[]): Uint8Array {
  return new Uint8Array(packr.pack(records));
}

export function decodeBlock<R extends ShuffleRecord = ShuffleRecord>(data: Uint8Array): R[] {
  return data.byteLength === 0 ? [] : (packr.unpack(data) as R[]);
}
