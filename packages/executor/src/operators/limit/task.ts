/**
 * limit(n) on a stream (Spark's StreamingLocalLimitExec and StreamingGlobalLimitExec), the task
 * part: the first n rows of the stream, then none, across batches and restarts (plan.ts has what
 * the driver plans with).
 *
 * - Map side: a task's first n rows (a local limit), every one under the one empty key, so that
 *   all of them meet in one state task (Spark requires AllTuples of its global limit).
 * - State: one value under that key, the count of rows emitted so far (format below). The empty
 *   key hashes to key group 0, so the count lives in the partition and shard that own group 0; a
 *   repartition handles it as any key (no index entry, one row).
 * - A batch: rows in block order (map-task order, each task's rows in order) pass while the
 *   count is below n; the count is stored when it grew.
 *
 * After an aggregation in complete mode each batch's input is the whole result: the limit takes its
 * first n rows and keeps no state (Spark plans a plain limit there).
 *
 * The value: the state value header (kind `limit`, version 1, no index entry, one row), then the
 * count (f64).
 */
import { corruptStateValue, dataKey, expectValueHeader, valueHeaderBytes, ValueKind, writeValueHeader } from '@sluice/state';
import { decodeGroupBlock } from '../../shuffle/shuffleCodec.js';
import { ShuffleWriter } from '../../shuffle/ShuffleWriter.js';
import type { Row } from '../../schema/types.js';
import type { MapSideInput, OperatorTask, Partials } from '../operator.js';
import type { StateContext } from '../stateContext.js';
import type { LimitOp } from './plan.js';

const LIMIT_VALUE_VERSION = 1;
const WHAT = "limit's state";

export function encodeLimitValue(count: number): Uint8Array {
  const out = new Uint8Array(valueHeaderBytes(null) + 8);
  const view = new DataView(out.buffer);
  view.setFloat64(writeValueHeader(out, view, 0, ValueKind.limit, LIMIT_VALUE_VERSION, null), count, true);
  return out;
}

export function decodeLimitValue(value: Uint8Array): number {
  const h = expectValueHeader(value, ValueKind.limit, LIMIT_VALUE_VERSION, WHAT);
  if (h === undefined || value.length !== h.start + 8) throw corruptStateValue(WHAT, `has ${value.length} bytes, not a header and a count`);
  return new DataView(value.buffer, value.byteOffset, value.length).getFloat64(h.start, true);
}

/** Whether the limit keeps no state: each batch's whole result, after an aggregation in complete mode. */
const perBatch = (ctx: StateContext, op: LimitOp): boolean => op.afterAggregation && ctx.task.outputMode === 'complete';

function mapSide(op: LimitOp, input: MapSideInput): Partials {
  const rows: Row[] = [];
  return {
    add(row) {
      if (rows.length < op.n) rows.push(row);
    },
    finish() {
      const writer = new ShuffleWriter(input.layout, []);
      if (rows.length > 0) writer.addGroup([], rows);
      return { blocks: writer.finish(), numRecords: rows.length, numLate: 0 };
    },
  };
}

async function run(ctx: StateContext, op: LimitOp): Promise<Row[]> {
  const groups = ctx.task.blocks.flatMap((b) => decodeGroupBlock(b.data));
  const first = groups[0];
  if (first === undefined) return [];
  const stateless = perBatch(ctx, op);
  const key = dataKey(first[0], first[1]);
  const [prior] = stateless ? [undefined] : await ctx.writer.read([key]);
  const before = prior === undefined ? 0 : decodeLimitValue(prior);
  let count = before;
  const rows: Row[] = [];
  for (const [, , groupRows] of groups) {
    for (const row of groupRows) {
      if (count >= op.n) break;
      rows.push(row);
      count += 1;
    }
  }
  if (!stateless && count > before) {
    ctx.writer.put(key, encodeLimitValue(count));
    ctx.counters.updated = 1;
    if (prior === undefined) ctx.counters.rowDelta = 1;
  }
  return rows;
}

export const limitTask: OperatorTask<LimitOp> = { mapSide, run };
