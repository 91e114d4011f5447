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

/** Runs the stages over a batch of rows; eventTime is absent when no watermark saw a time. */
export function runStages(plan: CompiledStages, input: readonly Row[]): { rows: Row[]; eventTime?: EventTimeStats } {
  const pipeline = rowPipeline(plan);
  const rows: Row[] = [];
  const emit = (row: Row): void => void rows.push(row);
  for (const row of input) pipeline.push(row, emit);
  const eventTime = pipeline.eventTime();
  return eventTime ? { rows, eventTime } : { rows };
}

/** The stages one row at a time: `push` hands the row's outputs to `emit` (none: filtered out; a join may give several). */
export function rowPipeline(plan: CompiledStages): { push(row: Row, emit: (row: Row) => void): void; eventTime(): EventTimeStats | undefined } {
  const stats: EventTimeStats = { min: Infinity, max: -Infinity, sum: 0, count: 0 };
  const stages = plan.stages;
  const run = (from: number, input: Row, emit: (row: Row) => void): void => {
    let row: Row | null = input;
    for (let i = from; i < stages.length; i++) {
      const stage = stages[i] as Stage;
      if (stage.many !== undefined) {
        for (const out of stage.many(row)) run(i + 1, out, emit);
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
    emit(row);
  };
  return {
    push: (row, emit) => run(0, row, emit),
    eventTime: () => (stats.count > 0 ? stats : undefined),
  };
}

/** JSON and Parquet files are read with only the columns the operators use; CSV maps columns by position. */
export function pruneInput(input: InputSplit, inputSchema: Schema, ops: Op[]): { input: InputSplit; schema: Schema } {
  if (input.type !== 'files' || (input.format !== 'json' && input.format !== 'parquet')) return { input, schema: inputSchema };
  const schema = requiredInputSchema(ops, input.schema);
  return schema.length === input.schema.length ? { input, schema: inputSchema } : { input: { ...input, schema }, schema };
}
