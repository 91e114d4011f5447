/**
 * Tasks over column batches: the map task of an aggregation (source chunks, then the operators
 * before the shuffle (columnStages.ts), then the hash aggregation (columnAggregate.ts), then the
 * shuffle blocks), and a stateless task whose rows are made only for its sink. A task whose
 * operators include a join runs them as rows (task/stages.ts), whose output an aggregation takes
 * in batches (mapSide.ts).
 */
import type { EventTimeStats, InputSplit, MapResult, MapTask } from '../task/messages.js';
import type { Schema } from '../schema/types.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import { CompileCache } from '../compileCache.js';
import { ShuffleWriter } from '../shuffle/ShuffleWriter.js';
import { exprType } from '../expressions/exprTypes.js';
import { columnAggregation, type ColumnAggregation } from './columnAggregate.js';
import { compileColumnStages, opsRunOnColumns, type ColumnStages } from './columnStages.js';
import { forEachInputBatch } from './columnSources.js';
import { rowsFromBatch, type ColumnBatch } from './vectors.js';
import type { Row } from '../schema/types.js';
import { mapSideAggregation, mapSideColumns, takesColumns } from '../operators/tasks.js';

interface Compiled {
  stages: ColumnStages;
  aggregation: () => ColumnAggregation;
}

const cache = new CompileCache<Compiled>();

function compiled(task: Pick<MapTask, 'ops'> & { stateful: AggregateOp }, schema: Schema, udfs: UdfRegistry): Compiled {
  return cache.of(JSON.stringify([schema, task.ops, task.stateful]), () => {
    const stages = stagesOf(task.ops, schema, udfs);
    return { stages, aggregation: columnAggregation(task.stateful, stages.outputSchema, udfs) };
  });
}

type AggregateOp = Extract<MapTask['stateful'], { kind: 'aggregate' }>;

export type MapOutput = Omit<MapResult, 'ok' | 'kind' | 'threadId'>;

/** Runs the map task over columns, or gives undefined when it runs as rows (a deduplication, or a generator among its operators). */
export function columnMapSide(task: MapTask, input: InputSplit, schema: Schema, udfs: UdfRegistry): MapOutput | undefined {
  return mapBatches(task, schema, udfs, (fn) => forEachInputBatch(input, schema, fn));
}

/** The map task over the batches `source` gives (it returns the number of rows). */
export function mapBatches(
  task: Pick<MapTask, 'ops' | 'stateful' | 'layout'> & Partial<Pick<MapTask, 'lateThresholdMs' | 'joinSide'>>,
  schema: Schema,
  udfs: UdfRegistry,
  source: (fn: (batch: ColumnBatch) => void) => number,
): MapOutput | undefined {
  // A generator, or a join with a residual condition, may turn a row into several: rows, not columns (task/stages.ts).
  if (!opsRunOnColumns(task.ops)) return undefined;
  const op = mapSideAggregation(task.stateful);
  if (op === undefined) return takesColumns(task.stateful) ? otherMapSide(task, schema, udfs, source) : undefined;
  const c = compiled({ ops: task.ops, stateful: op }, schema, udfs);
  const aggregation = c.aggregation();
  const stats: EventTimeStats = { min: Infinity, max: -Infinity, sum: 0, count: 0 };
  const numInputRows = source((batch) => aggregation.add(c.stages.run(batch, stats)));
  const writer = new ShuffleWriter(
    task.layout,
    op.keys.map((k) => exprType(k, c.stages.outputSchema)),
    op.routeKeys,
  );
  const numRecords = aggregation.finish(writer);
  return { numInputRows, numRecords, blocks: writer.finish(), ...(stats.count > 0 && { eventTime: stats }) };
}

/** A kind whose map side takes column batches as they leave the operators (a join of two streams). */
function otherMapSide(
  task: Parameters<typeof mapBatches>[0],
  schema: Schema,
  udfs: UdfRegistry,
  source: (fn: (batch: ColumnBatch) => void) => number,
): MapOutput | undefined {
  const stages = stagesOf(task.ops, schema, udfs);
  const partials = mapSideColumns(task.stateful, {
    schema: stages.outputSchema,
    layout: task.layout,
    udfs,
    lateThresholdMs: task.lateThresholdMs ?? null,
    joinSide: task.joinSide ?? 0,
  });
  if (partials === undefined) return undefined;
  const stats: EventTimeStats = { min: Infinity, max: -Infinity, sum: 0, count: 0 };
  const numInputRows = source((batch) => {
    const out = stages.run(batch, stats);
    if (out.length > 0) partials.addBatch(out);
  });
  const { blocks, numRecords, numLate } = partials.finish();
  return { numInputRows, numRecords, blocks, ...(numLate > 0 && { numLateRows: numLate }), ...(stats.count > 0 && { eventTime: stats }) };
}

const stagesCache = new CompileCache<ColumnStages>();

/** The column stages of `ops` over `schema`, compiled once per worker. */
function stagesOf(ops: MapTask['ops'], schema: Schema, udfs: UdfRegistry): ColumnStages {
  return stagesCache.of(JSON.stringify([schema, ops]), () => compileColumnStages(ops, schema, udfs));
}

/** A stateless task's operators over the batches of `input`; rows only for what they output. */
export function columnStateless(
  ops: MapTask['ops'],
  input: InputSplit,
  schema: Schema,
  udfs: UdfRegistry,
  keepRows = true,
): { numInputRows: number; numOutputRows: number; rows: Row[]; eventTime?: EventTimeStats } {
  const stages = stagesOf(ops, schema, udfs);
  const stats: EventTimeStats = { min: Infinity, max: -Infinity, sum: 0, count: 0 };
  const rows: Row[] = [];
  let numOutputRows = 0;
  const numInputRows = forEachInputBatch(input, schema, (batch) => {
    const out = stages.run(batch, stats);
    numOutputRows += out.length;
    if (keepRows && out.length > 0) for (const row of rowsFromBatch(out, stages.outputSchema)) rows.push(row);
  });
  return { numInputRows, numOutputRows, rows, ...(stats.count > 0 && { eventTime: stats }) };
}
