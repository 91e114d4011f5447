/**
 * The stateless operators of a task over column batches: the counterpart of task/stages.ts,
 * with the same stages (split at withWatermark markers, where event-time statistics are taken) and
 * the same output. A filter keeps the rows whose condition is true by gathering every column; a
 * projection evaluates its expressions and passes plain columns through without a copy.
 */
import type { EventTimeStats } from '../task/messages.js';
import type { Op } from '../operators/types.js';
import type { Expr } from '../expressions/types.js';
import type { Schema } from '../schema/types.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import { opOutputSchema } from '../expressions/exprTypes.js';
import { expandsRows } from '../operators/generate.js';
import { resolveColumn } from '../expressions/resolveColumn.js';
import { compileColumnExpr, type ColumnEvaluator } from './columnExpr.js';
import { gather, type ColumnBatch, type Vector } from './vectors.js';
import { joinRunsOnColumns, joinStep } from './columnJoin.js';

type Step = (batch: ColumnBatch) => ColumnBatch;

function filterStep(cond: ColumnEvaluator): Step {
  return (batch) => {
    const c = cond(batch);
    const n = batch.length;
    const idx = new Int32Array(n);
    let m = 0;
    // Null drops the row like false.
    if (c.kind === 'bool') {
      for (let i = 0; i < n; i++) if (c.values[i] === 1 && (c.nulls === null || c.nulls[i] === 0)) idx[m++] = i;
    } else if (c.kind === 'any') {
      for (let i = 0; i < n; i++) if (c.values[i] === true) idx[m++] = i;
    }
    if (m === n) return batch;
    const columns = new Map<string, Vector>();
    for (const [name, v] of batch.columns) columns.set(name, gather(v, idx, m));
    return { length: m, columns };
  };
}

/** A top-level column passed through as is (compileOps.ts's projectedField). */
function passThrough(expr: Expr, schema: Schema): string | undefined {
  const inner = expr.op === 'alias' ? expr.expr : expr;
  if (inner.op !== 'col') return undefined;
  const { path } = resolveColumn(inner.name, schema);
  return path.length === 1 ? path[0] : undefined;
}

function projectStep(exprs: Expr[], schema: Schema, out: Schema, udfs: UdfRegistry): Step {
  const fields = exprs.map((e, i) => {
    const name = out[i]!.name;
    const from = passThrough(e, schema);
    return from !== undefined ? { name, from } : { name, ev: compileColumnExpr(e, schema, udfs) };
  });
  return (batch) => {
    const columns = new Map<string, Vector>();
    for (const f of fields) columns.set(f.name, 'from' in f ? batch.columns.get(f.from!)! : f.ev(batch));
    return { length: batch.length, columns };
  };
}

export interface ColumnStages {
  outputSchema: Schema;
  /** Runs every stage over one batch, adding the event-time statistics of the watermarks to `stats`. */
  run(batch: ColumnBatch, stats: EventTimeStats): ColumnBatch;
}

/** Compiles `ops` over batches of `schema` (udfs already loaded, as for compileStages). */
export function compileColumnStages(ops: readonly Op[], schema: Schema, udfs: UdfRegistry): ColumnStages {
  const steps: Array<{ step?: Step; eventTimeColumn?: string }> = [];
  let current = schema;
  for (const op of ops) {
    const out = opOutputSchema(op, current);
    if (op.kind === 'filter') steps.push({ step: filterStep(compileColumnExpr(op.cond, current, udfs)) });
    else if (op.kind === 'project') steps.push({ step: projectStep(op.exprs, current, out, udfs) });
    // task/stages.ts measures at the end of the stage a marker closes: here, before what follows it.
    else if (op.kind === 'watermark') steps.push({ eventTimeColumn: op.column });
    else if (op.kind === 'join' && joinRunsOnColumns(op)) steps.push({ step: joinStep(op, current, out) });
    // A generator, or a join's residual condition, reads rows: its tasks run as rows (columnMapSide, worker.ts).
    else throw new Error(`a ${op.kind} runs as rows, not as column batches`);
    current = out;
  }
  return {
    outputSchema: current,
    run(input, stats) {
      let batch = input;
      for (const s of steps) {
        if (s.step !== undefined) batch = s.step(batch);
        else addEventTimes(batch.columns.get(s.eventTimeColumn!), batch.length, stats);
        if (batch.length === 0) break;
      }
      return batch;
    },
  };
}

function addEventTimes(v: Vector | undefined, n: number, stats: EventTimeStats): void {
  if (v === undefined || v.kind !== 'num') return;
  for (let i = 0; i < n; i++) {
    if (v.nulls !== null && v.nulls[i] === 1) continue;
    const t = v.values[i]!;
    if (t < stats.min) stats.min = t;
    if (t > stats.max) stats.max = t;
    stats.sum += t;
    stats.count += 1;
  }
}

/** Whether a task's operators run on column batches (else its tasks run as rows). */
export function opsRunOnColumns(ops: readonly Op[]): boolean {
  return !ops.some((o) => expandsRows(o) && !joinRunsOnColumns(o));
}
