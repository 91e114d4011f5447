/**
 * Task entry of an executor: piscina loads this file in each worker thread and calls the default
 * export once per task. A stateless task reads its split, runs the operators, then writes one
 * sink file or hands its rows back. A map task runs the operators before the shuffle and returns
 * shuffle blocks; a state task is the reduce side (stateTask.ts). Coded (user-caused) failures
 * return as values so that the driver fails the query without retrying; anything else throws and
 * the driver retries the task.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { SluiceError } from '@sluice/state';
import type { UdfRegistry } from './expr.js';
import { formatRecords } from './formats.js';
import { loadMapSideUdfs, partitionPartials } from './mapSide.js';
import type { MapTask, StatelessTask, TaskRequest, TaskResult } from './messages.js';
import { readInput } from './readInput.js';
import { encodeRows } from './rowCodec.js';
import { compileStages, pruneInput, runStages } from './stages.js';
import { runStateTask } from './stateTask.js';

const udfs: UdfRegistry = new Map();

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

async function runStateless(task: StatelessTask): Promise<TaskResult> {
  const { input, schema } = pruneInput(task.input, task.inputSchema, task.ops);
  const plan = await compileStages(schema, task.ops, udfs);
  const inputRows = readInput(input);
  const { rows, eventTime } = runStages(plan, inputRows);
  const base = { ok: true as const, threadId, numInputRows: inputRows.length, numOutputRows: rows.length, ...(eventTime && { eventTime }) };
  const out = task.output;
  if (out.type === 'collect') return { ...base, rows: encodeRows(rows) };
  if (out.skip || rows.length === 0) return base;
  mkdirSync(out.dir, { recursive: true });
  const size = writeDurable(join(out.dir, out.fileName), formatRecords(out.format, rows, plan.outputSchema, out.options));
  return { ...base, file: { name: out.fileName, size, rows: rows.length } };
}

async function runMap(task: MapTask): Promise<TaskResult> {
  const { input, schema } = pruneInput(task.input, task.inputSchema, task.ops);
  const plan = await compileStages(schema, task.ops, udfs);
  await loadMapSideUdfs(task.stateful, udfs);
  const inputRows = readInput(input);
  const { rows, eventTime } = runStages(plan, inputRows);
  const { blocks, numRecords } = partitionPartials(rows, task.stateful, plan.outputSchema, task.layout, udfs);
  return { ok: true, threadId, numInputRows: inputRows.length, numOutputRows: numRecords, blocks, ...(eventTime && { eventTime }) };
}

export default async function runTask(task: TaskRequest): Promise<TaskResult> {
  try {
    switch (task.kind) {
      case 'stateless':
        return await runStateless(task);
      case 'map':
        return await runMap(task);
      case 'state':
        return await runStateTask(task);
    }
  } catch (e) {
    if (e instanceof SluiceError) return { ok: false, error: e.toJSON() };
    throw e;
  }
}
