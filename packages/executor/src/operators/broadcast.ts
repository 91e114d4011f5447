/**
 * The driver's part of a join of a stream with a static table: the table's rows, packed once per
 * query run into a SharedArrayBuffer that every task message of the run shares. The workers'
 * part (operators/join.ts) unpacks and indexes them once per worker.
 */
import type { Row } from '../schema/types.js';
import { plainPackr as packr } from '../task/packers.js';

/** A static side's rows (engine form) in a SharedArrayBuffer: every task message of a run shares it. */
export function broadcastRows(rows: readonly Row[]): SharedArrayBuffer {
  const bytes = packr.pack(rows);
  const shared = new SharedArrayBuffer(bytes.length);
  new Uint8Array(shared).set(bytes);
  return shared;
}
