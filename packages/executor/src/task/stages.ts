/**
 * The stateless operators of a task as stages split at withWatermark markers, where event-time
 * statistics are taken. Stateless tasks run all their operators this way; map tasks run the
 * operators before the shuffle this way too, so both report eventTime identically.
 */
import { CompileCache } from '../compileCache.js';
import { compileOps } from '../operators/compileOps.js';
import { compileJoin } from '../operators/join.js';
import { compileGenerate } from '../operators/generate.js';
import { opOutputSchema } from '../expressions/exprTypes.js';
import { loadUdfs, type UdfRegistry } from '../expressions/udfs.js';
import type { EventTimeStats, InputSplit } from './messages.js';
import { requiredInputSchema } from '../expressions/pruning.js';
import type { Op } from '../operators/types.js';
import type { Row, Schema } from '../schema/types.js';

interface Stage {
  each(row: Row): Row | null;
  /** A join or a generator: each row becomes any number of rows. */
  many?: (row: Row) => Row[];
  /** Event-time column to measure after this stage, if a watermark follows it. */
  eventTimeColumn?: string;
}

export interface CompiledStages {
  stages: Stage[];
  outputSchema: Schema;
}

const planCache = new CompileCache<CompiledStages>();

/** Compiles `ops` over `schema` once per worker (udfs are loaded into `udfs` first). */
export async function compileStages(schema: Schema, ops: Op[], udfs: UdfRegistry): Promise<CompiledStages> {
  const key = JSON.stringify([schema, ops]);
  const cached = planCache.get(key);
  if (cached) return cached;
  await loadUdfs(ops, udfs);
  const stages: Stage[] = [];
  let current: Op[] = [];
  let stageSchema = schema;
  const flush = (eventTimeColumn?: string): void => {
    const compiled = compileOps(current, stageSchema, udfs);
    stages.push({ each: compiled.each, ...(eventTimeColumn !== undefined && { eventTimeColumn }) });
    stageSchema = compiled.outputSchema;
    current = [];
  };
  for (const op of ops) {
    if (op.kind === 'watermark') flush(op.column);
    else if (op.kind === 'join' || op.kind === 'generate') {
      flush();
      stages.push({ each: () => null, many: op.kind === 'join' ? compileJoin(op, stageSchema, udfs) : compileGenerate(op, stageSchema, udfs) });
      stageSchema = opOutputSchema(op, stageSchema);
    } else current.push(op);
  }
  flush();
  return planCache.of(key, () => ({ stages, outputSchema: stageSchema }));
}

/** Where a row's outputs go: an array, or anything with its push. */
export interface RowOut {
  push(row: Row): unknown;
}

/**
 * Runs the stages over a batch of rows; eventTime is absent when no watermark saw a time. The rows
 * go straight into the result array: no closure made per task in a hot loop
 * (docs/internals/operators.md).
 */
export function runStages(plan: CompiledStages, input: readonly Row[]): { rows: Row[]; eventTime?: EventTimeStats } {
  const stats = newStats();
  const rows: Row[] = [];
  for (const row of input) runFrom(plan.stages, stats, 0, row, rows);
  return stats.count > 0 ? { rows, eventTime: stats } : { rows };
}

/** The stages one row at a time: `push` hands the row's outputs to `out` (none: filtered out; a join may give several). */
export function rowPipeline(plan: CompiledStages): { push(row: Row, out: RowOut): void; eventTime(): EventTimeStats | undefined } {
  const stats = newStats();
  return {
    push: (row, out) => runFrom(plan.stages, stats, 0, row, out),
    eventTime: () => (stats.count > 0 ? stats : undefined),
  };
}

const newStats = (): EventTimeStats => ({ min: Infinity, max: -Infinity, sum: 0, count: 0 });

/** Runs `input` through stages[from...], measuring event times into `stats`; its outputs go to `out`. */
function runFrom(stages: readonly Stage[], stats: EventTimeStats, from: number, input: Row, out: RowOut): void {
  let row: Row | null = input;
  for (let i = from; i < stages.length; i++) {
    const stage = stages[i] as Stage;
    if (stage.many !== undefined) {
      for (const next of stage.many(row)) runFrom(stages, stats, i + 1, next, out);
      return;
    }
    row = stage.each(row);
    if (row === null) return;
    if (stage.eventTimeColumn !== undefined) {
      const t = row[stage.eventTimeColumn];
      if (typeof t === 'number') {
        if (t < stats.min) stats.min = t;
        if (t > stats.max) stats.max = t;
        stats.sum += t;
        stats.count += 1;
      }
    }
  }
  out.push(row);
}

/** JSON and Parquet files are read with only the columns the operators use; CSV maps columns by position. */
export function pruneInput(input: InputSplit, inputSchema: Schema, ops: Op[]): { input: InputSplit; schema: Schema } {
  if (input.type !== 'files' || (input.format !== 'json' && input.format !== 'parquet')) return { input, schema: inputSchema };
  const schema = requiredInputSchema(ops, input.schema);
  return schema.length === input.schema.length ? { input, schema: inputSchema } : { input: { ...input, schema }, schema };
}
