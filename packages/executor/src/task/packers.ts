/**
 * Every msgpackr configuration of the engine, in one place (what crosses the thread boundary as
 * msgpack, and how):
 *
 * - `recordPackr`, records on: task rows (rowCodec.ts) and deduplication shuffle blocks
 *   (shuffleCodec.ts): rows of one shape share one field list per message, and decode into objects
 *   of one shape.
 * - `plainPackr`, records off: a join's static side (operators/join.ts), decoded once per worker
 *   into rows that outlive the message; and the rows a join of two streams keeps in state
 *   (operators/join/codec.ts), which outlive the process.
 *
 * `moreTypes` is off in both: engine values are plain JSON-like values (timestamps are numbers).
 * Other state values do not use msgpack: aggregations use aggBufferCodec.ts, deduplications
 * @sluice/state's dedupState.ts.
 */
import { Packr } from 'msgpackr';

export const recordPackr = new Packr({ useRecords: true, moreTypes: false });
export const plainPackr = new Packr({ useRecords: false, moreTypes: false });
