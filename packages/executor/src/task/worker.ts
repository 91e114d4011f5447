/**
 * Task entry of an executor: piscina loads this file in each worker thread and calls the default
 * export once per task. A stateless task reads its split, runs the operators, then writes one
 * sink file or hands its rows back. A map task runs the operators before the shuffle and returns
 * shuffle blocks; a state task is the reduce side (stateTask.ts), after its batch's map tasks
 * when it carries them. Coded (user-caused) failures return as values so that the driver fails
 * the query without retrying; anything else throws and the driver retries the task.
 */
import { threadId } from 'node:worker_threads';
import { SluiceError } from '@sluice/state';
import type { UdfRegistry } from '../expressions/udfs.js';
import { loadMapSideUdfs, streamPartials } from '../operators/tasks.js';
import type {
  ExchangeResult,
  ExchangeTask,
  MapResult,
  MapTask,
  ReleaseResult,
  StateResult,
  StateTask,
  StatelessResult,
  StatelessTask,
  TaskFailure,
  TaskRequest,
  TaskResult,
} from './messages.js';
import { compileExpr } from '../expressions/compileExpr.js';
import { exprType } from '../expressions/exprTypes.js';
import { shufflePartition } from '../shuffle/partitioner.js';
import { encodeRows } from './rowCodec.js';
import { forEachInputRow, readInput } from './readInput.js';
import { deliver } from './taskOutput.js';
import { compileStages, pruneInput, rowPipeline, runStages } from './stages.js';
import { releaseShards, runStateTask, shards } from '../operators/stateTask.js';
import { columnMapSide, columnStateless } from '../columns/columnMapSide.js';
import type { Row } from '../schema/types.js';
import { opsRunOnColumns } from '../columns/columnStages.js';
import { BATCH_ROWS, readsAsColumns } from '../columns/columnSources.js';
import { loadParquetInput } from '../formats/parquetInput.js';
import { setBatchTimestamp } from '../expressions/batchClock.js';

const udfs: UdfRegistry = new Map();

/**
 * JSON and Parquet files and generated inputs (nexmark, rate) are read into columns and go through the
 * operators as columns, becoming rows only for the sink (none for the noop sink); other inputs run
 * as rows.
 */
async function runStateless(task: StatelessTask): Promise<StatelessResult> {
  const { input, schema } = pruneInput(task.input, task.inputSchema, task.ops);
  loadParquetInput(input, task.ops, BATCH_ROWS);
  const plan = await compileStages(schema, task.ops, udfs);
  if (readsAsColumns(input) && opsRunOnColumns(task.ops)) {
    const { numInputRows, numOutputRows, rows, eventTime } = columnStateless(task.ops, input, schema, udfs, task.output.type !== 'discard');
    const base: StatelessResult = { ok: true, kind: 'stateless', threadId, numInputRows, numOutputRows, ...(eventTime && { eventTime }) };
    return deliver(base, task.output, rows, plan.outputSchema);
  }
  const inputRows = readInput(input);
  const { rows, eventTime } = runStages(plan, inputRows);
  const base: StatelessResult = {
    ok: true,
    kind: 'stateless',
    threadId,
    numInputRows: inputRows.length,
    numOutputRows: rows.length,
    ...(eventTime && { eventTime }),
  };
  return deliver(base, task.output, rows, plan.outputSchema);
}

/**
 * An aggregation's rows flow as column batches from the source through the operators into the
 * hash table (columns/); other stateful operators take rows one at a time.
 */
async function runMap(task: MapTask): Promise<MapResult> {
  const { input, schema } = pruneInput(task.input, task.inputSchema, task.ops);
  loadParquetInput(input, task.ops, BATCH_ROWS);
  const plan = await compileStages(schema, task.ops, udfs);
  await loadMapSideUdfs(task.stateful, udfs);
  const columnar = columnMapSide(task, input, schema, udfs);
  if (columnar !== undefined) return { ok: true, kind: 'map', threadId, ...columnar };
  const pipeline = rowPipeline(plan);
  const partials = streamPartials(task.stateful, plan.outputSchema, task.layout, udfs, task.lateThresholdMs, task.joinSide);
  const out = { push: (row: Row): void => partials.add(row) };
  const numInputRows = forEachInputRow(input, (row) => pipeline.push(row, out));
  const { blocks, numRecords, numLate } = partials.finish();
  const eventTime = pipeline.eventTime();
  return {
    ok: true,
    kind: 'map',
    threadId,
    numInputRows,
    numRecords,
    blocks,
    ...(numLate > 0 && { numLateRows: numLate }),
    ...(eventTime && { eventTime }),
  };
}

/**
 * A state task carrying its batch's map tasks (a small batch) runs them first, in this worker,
 * merges their blocks of its own partitions and hands back the rest, for the other shards' state
 * tasks: the batch costs one round trip a shard, with no map stage.
 */
async function runState(task: StateTask): Promise<StateResult> {
  if (task.maps === undefined) return runStateTask(task, udfs);
  const maps: MapResult[] = [];
  for (const m of task.maps) maps.push(await runMap(m));
  const own = new Set(task.partitions);
  const blocks = maps.flatMap((m) => m.blocks.filter((b) => own.has(b.partition)));
  const otherBlocks = maps.flatMap((m) => m.blocks.filter((b) => !own.has(b.partition)));
  const result = await runStateTask({ ...task, blocks }, udfs);
  return { ...result, maps: maps.map(({ blocks: _, ...facts }) => facts), ...(otherBlocks.length > 0 && { otherBlocks }) };
}

/** Hashes the rows the operators give into partitions (no keys: round robin from the task's number). */
async function runExchange(task: ExchangeTask): Promise<ExchangeResult> {
  const { input, schema } = pruneInput(task.input, task.inputSchema, task.ops);
  loadParquetInput(input, task.ops, BATCH_ROWS);
  const plan = await compileStages(schema, task.ops, udfs);
  const keys = task.keys.map((k) => compileExpr(k, plan.outputSchema, udfs));
  const keyTypes = task.keys.map((k) => exprType(k, plan.outputSchema));
  const buckets: Row[][] = Array.from({ length: task.partitions }, () => []);
  let next = task.partition;
  let numOutputRows = 0;
  const add = (row: Row): void => {
    numOutputRows++;
    const p =
      keys.length === 0
        ? next++ % task.partitions
        : shufflePartition(
            keys.map((k) => k(row)),
            keyTypes,
            task.partitions,
          );
    (buckets[p] as Row[]).push(row);
  };
  const pipeline = rowPipeline(plan);
  const out = { push: add };
  const numInputRows = forEachInputRow(input, (row) => pipeline.push(row, out));
  const blocks = buckets.flatMap((rows, partition) => (rows.length > 0 ? [{ partition, data: encodeRows(rows) }] : []));
  const eventTime = pipeline.eventTime();
  return { ok: true, kind: 'exchange', threadId, numInputRows, numOutputRows, blocks, ...(eventTime && { eventTime }) };
}

export default async function runTask(task: TaskRequest): Promise<TaskResult> {
  // A worker runs one task at a time, so the batch's timestamp is the thread's while it runs.
  setBatchTimestamp(task.batchTimestampMs ?? Date.now());
  try {
    switch (task.kind) {
      case 'stateless':
        return await runStateless(task);
      case 'map':
        return await runMap(task);
      case 'state':
        return await runState(task);
      case 'exchange':
        return await runExchange(task);
      case 'release': {
        const notClosed = await releaseShards(task.stateDir);
        const stateStores = shards.usage();
        const result: ReleaseResult = { ok: true, kind: 'release', threadId, ...(stateStores && { stateStores }), ...(notClosed.length > 0 && { notClosed }) };
        return result;
      }
    }
  } catch (e) {
    if (e instanceof SluiceError) return { ok: false, error: e.toJSON() } satisfies TaskFailure;
    throw e;
  }
}
