/**
 * Every msgpackr configuration of the engine, in one place (what crosses the thread boundary as
 * msgpack, and how):
 *
 * - `recordPackr`, records on: task rows (rowCodec.ts) and deduplication shuffle blocks
 *   (shuffleCodec.ts): rows of one shape share one field list per message, and decode into objects
 *   of one shape.
 * - `plainPackr`, records off: a join's static side (operators/join.ts), decoded once per worker
 *   into rows that outlive the message; and the state payloads of a join of two streams
 *   (operators/join/codec.ts) and of a processor (operators/processor/state.ts), which outlive the
 *   process, after their value header (packWithValueHeader).
 *
 * `moreTypes` is off in both: engine values are plain JSON-like values (timestamps are numbers).
 * Other state values do not use msgpack: aggregations use aggBufferCodec.ts, deduplications
 * @sluice/state's dedupState.ts, session windows sessionWindow/codec.ts.
 */
import { valueHeaderBytes, writeValueHeader, type ValueIndexTime, type ValueKind } from '@sluice/state';
import { Packr, RESERVE_START_SPACE } from 'msgpackr';

export const recordPackr = new Packr({ useRecords: true, moreTypes: false });
export const plainPackr = new Packr({ useRecords: false, moreTypes: false });

/**
 * A state value: its header, then `payload` packed by `packr`, in the one array msgpackr packs
 * into (it leaves the header's room at the start), so a value costs no second array and copy.
 */
export function packWithValueHeader(packr: Packr, payload: unknown, kind: ValueKind, version: number, indexTime: ValueIndexTime, rows: number): Uint8Array {
  const out = packr.pack(payload, RESERVE_START_SPACE | valueHeaderBytes(indexTime, rows));
  writeValueHeader(out, undefined, 0, kind, version, indexTime, rows);
  return out;
}
