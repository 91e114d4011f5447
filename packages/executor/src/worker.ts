/**
 * Task entry of an executor: piscina loads this file in each worker thread and calls the default
 * export once per task. A task reads its split, runs the stateless operators, then writes one
 * sink file or hands its rows back. Coded (user-caused) failures return as values so that the
 * driver fails the query without retrying; anything else throws and the driver retries the task.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { SluiceError } from '@sluice/state';
import { compileOps, loadUdfs, type UdfRegistry } from './expr.js';
import { formatRecords } from './formats.js';
import type { EventTimeStats, InputSplit, StatelessTask, TaskRequest, TaskResult } from './messages.js';
import { requiredInputSchema } from './pruning.js';
import { readInput } from './readInput.js';
import { encodeRows } from './rowCodec.js';
import type { Op, Row, Schema } from './types.js';

const udfs: UdfRegistry = new Map();

interface Stage {
  run(rows: Row[]): Row[];
  /** Event-time column to measure after this stage, if a watermark follows it. */
  eventTimeColumn?: string;
}

interface CompiledPlan {
  stages: Stage[];
  outputSchema: Schema;
}

const planCache = new Map<string, CompiledPlan>();

/** Splits the operator chain at withWatermark markers, where event-time statistics are taken. */
async function compile(schema: Schema, ops: Op[]): Promise<CompiledPlan> {
  const key = JSON.stringify([schema, ops]);
  const cached = planCache.get(key);
  if (cached) return cached;
  await loadUdfs(ops, udfs);
  const stages: Stage[] = [];
  let current: Op[] = [];
  let stageSchema = schema;
  const flush = (eventTimeColumn?: string): void => {
    const compiled = compileOps(current, stageSchema, udfs);
    stages.push({ run: compiled.run, ...(eventTimeColumn !== undefined && { eventTimeColumn }) });
    stageSchema = compiled.outputSchema;
    current = [];
  };
  for (const op of ops) {
    if (op.kind === 'watermark') flush(op.column);
    else current.push(op);
  }
  flush();
  const plan = { stages, outputSchema: stageSchema };
  if (planCache.size > 256) planCache.clear();
  planCache.set(key, plan);
  return plan;
}

function measure(rows: Row[], column: string, into: EventTimeStats): void {
  for (let i = 0; i < rows.length; i++) {
    const t = (rows[i] as Row)[column];
    if (typeof t !== 'number') continue;
    if (t < into.min) into.min = t;
    if (t > into.max) into.max = t;
    into.sum += t;
    into.count += 1;
  }
}

function writeDurable(path: string, text: string): number {
  const buf = Buffer.from(text);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, buf);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return buf.byteLength;
}

/** JSON files are read with only the columns the operators use; CSV maps columns by position. */
function pruneInput(task: StatelessTask): { input: InputSplit; schema: Schema } {
  const input = task.input;
  if (input.type !== 'files' || input.format !== 'json') return { input, schema: task.inputSchema };
  const schema = requiredInputSchema(task.ops, input.schema);
  return schema.length === input.schema.length ? { input, schema: task.inputSchema } : { input: { ...input, schema }, schema };
}

async function runStateless(task: StatelessTask): Promise<TaskResult> {
  const { input, schema } = pruneInput(task);
  const plan = await compile(schema, task.ops);
  let rows = readInput(input);
  const numInputRows = rows.length;
  let eventTime: EventTimeStats | undefined;
  for (const stage of plan.stages) {
    rows = stage.run(rows);
    if (stage.eventTimeColumn !== undefined) {
      eventTime ??= { min: Infinity, max: -Infinity, sum: 0, count: 0 };
      measure(rows, stage.eventTimeColumn, eventTime);
    }
  }
  const base = {
    ok: true as const,
    threadId,
    numInputRows,
    numOutputRows: rows.length,
    ...(eventTime && eventTime.count > 0 && { eventTime }),
  };
  const out = task.output;
  if (out.type === 'collect') return { ...base, rows: encodeRows(rows) };
  if (out.skip || rows.length === 0) return base;
  mkdirSync(out.dir, { recursive: true });
  const size = writeDurable(join(out.dir, out.fileName), formatRecords(out.format, rows, plan.outputSchema, out.options));
  return { ...base, file: { name: out.fileName, size, rows: rows.length } };
}

export default async function runTask(task: TaskRequest): Promise<TaskResult> {
  try {
    return await runStateless(task);
  } catch (e) {
    if (e instanceof SluiceError) return { ok: false, error: e.toJSON() };
    throw e;
  }
}
