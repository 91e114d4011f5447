/**
 * dropDuplicates and dropDuplicatesWithinWatermark (Spark's StreamingDeduplicateExec and
 * StreamingDeduplicateWithinWatermarkExec), the plan part: a row is emitted the first time its key
 * is seen, so rows pass unchanged. The map side and the batch are in task.ts.
 */
import { decodeDedupValue, SluiceError } from '@sluice/state';
import { resolveColumn } from '../../expressions/resolveColumn.js';
import type { Schema } from '../../schema/types.js';
import { typeName } from '../../schema/values.js';
import type { OperatorPlan } from '../operator.js';
import type { StatefulOp } from '../types.js';

export type DedupOp = Extract<StatefulOp, { kind: 'dropDuplicates' | 'dropDuplicatesWithinWatermark' }>;

/** A deduplication passes rows unchanged; its columns must exist and its event time be a TIMESTAMP. */
export function dedupOutputSchema(op: DedupOp, inputSchema: Schema): Schema {
  for (const c of op.columns) resolveColumn(c, inputSchema);
  if (op.eventTimeColumn !== null) {
    const f = resolveColumn(op.eventTimeColumn, inputSchema).field;
    if (f.type !== 'timestamp') {
      throw new SluiceError('INVALID_EVENT_TIME_COLUMN', `the event-time column '${op.eventTimeColumn}' must be TIMESTAMP, not ${typeName(f.type)}`, {
        column: op.eventTimeColumn,
      });
    }
  }
  return inputSchema;
}

function dedupPlan<K extends DedupOp['kind']>(
  kind: K,
  progressName: string,
  usesWatermark: (op: Extract<DedupOp, { kind: K }>) => boolean,
): OperatorPlan<Extract<DedupOp, { kind: K }>> {
  return {
    kind,
    progressName,
    usesWatermark,
    lateOnMapSide: true,
    // Rows pass unchanged: their event-time columns too.
    eventTimeColumnsOut: (_op, input) => new Set(input),
    outputSchema: dedupOutputSchema,
    mapSideExprs: () => [],
    // Values before the value header: one that uses the watermark indexes keys by the expiry its
    // value records (the oldest format records none: the repartition scans the index then).
    oldValues: { indexTimeOf: (_op, _schema, uses) => (uses ? (_key, value) => decodeDedupValue(value).expiryMs : () => null) },
  };
}

export const dropDuplicates = dedupPlan('dropDuplicates', 'dedupe', (op) => op.eventTimeColumn !== null);
export const dropDuplicatesWithinWatermark = dedupPlan('dropDuplicatesWithinWatermark', 'dedupeWithinWatermark', () => true);
