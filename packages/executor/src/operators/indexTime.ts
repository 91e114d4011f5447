/**
 * A stateful operator's eviction index time of a stored row, read from the row itself, so that a
 * repartition can write each moved row's index entry beside it instead of scanning the whole
 * index (@sluice/state keyGroupMoves.ts). It gives what the state task wrote:
 *
 * - an aggregation: the event time of its key (a window's end, or the watermarked column's value),
 *   decoded from the key; null for a key without one, or an aggregation without an event-time key;
 * - a deduplication that uses the watermark: the expiry its value records (dedupState.ts), which
 *   a value of the format before it does not (undefined: the repartition scans the index then);
 *   one that does not use the watermark writes no index entries (null);
 * - a join of two streams: the time its value records (streamJoin.ts), its rows' least expiry;
 * - a session window: the time its value records (sessionWindow.ts), its sessions' least end.
 */
import { decodeDataKey, decodeDedupValue, decodeKey, type IndexTimeOf } from '@sluice/state';
import { exprType } from '../expressions/exprTypes.js';
import type { Schema } from '../schema/types.js';
import { eventTimeOfKey } from './aggregates.js';
import { joinIndexTimeOf, joinRowsIn } from './streamJoin.js';
import { stateRowsIn } from './processorState.js';
import { sessionHeader, sessionKeyOf } from './sessionWindow.js';
import type { StatefulOp } from './types.js';

export function indexTimeOf(op: StatefulOp, stateInputSchema: Schema, usesWatermark: boolean): IndexTimeOf {
  if (op.kind === 'streamJoin') return (_key, value) => joinIndexTimeOf(value);
  // A processor's key may have several index entries (its timers and its expiry): the repartition scans the index.
  if (op.kind === 'transformWithState') return () => undefined;
  if (sessionKeyOf(op) >= 0) return (_key, value) => sessionHeader(value).indexTime;
  if (op.kind !== 'aggregate') return usesWatermark ? (_key, value) => decodeDedupValue(value).expiryMs : () => null;
  const keyTypes = op.keys.map((k) => exprType(k, stateInputSchema));
  const timeOf = eventTimeOfKey(op, keyTypes);
  if (timeOf === undefined) return () => null;
  return (key) => timeOf(decodeKey(decodeDataKey(key).key, keyTypes)) ?? null;
}

/**
 * The repartition hook of an operator that keeps several rows in one state value (by its progress
 * name): a join's values count their rows, a session window's its sessions, a processor's its
 * variables' rows. Empty for the others,
 * whose values are one row each.
 */
export function rowsInOf(operatorName: string | undefined): { rowsIn?: (value: Uint8Array) => number } {
  if (operatorName === 'symmetricHashJoin') return { rowsIn: joinRowsIn };
  if (operatorName === 'sessionWindowStateStoreSaveExec') return { rowsIn: (value) => sessionHeader(value).count };
  if (operatorName === 'transformWithStateExec') return { rowsIn: stateRowsIn };
  return {};
}
