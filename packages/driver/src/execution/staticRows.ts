/**
 * The rows of a static (batch) DataFrame over files, read by the executors: `collect()`, and the
 * static side of a stream-static join, which is read once per query run.
 */
import { decodeRows, encodeRows, type InputSplit, type Row, type StatelessTask } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { LogicalPlan } from '../plan/LogicalPlan.js';
import type { TaskScheduler } from '../scheduler/TaskScheduler.js';
import { committedFiles } from '../sinks/FileSink.js';
import { listFiles } from '../sources/fileSystem.js';
import { splitRange } from '../sources/RateSource.js';
import { readSqliteRows } from '../sources/sqliteTable.js';

/** The files a static read sees: a Sluice sink's committed files, else every file listed. */
export function staticFiles(dir: string): string[] {
  return committedFiles(dir) ?? listFiles(dir).map((f) => f.path);
}

/** The plan's rows in engine form, read from its files as they are now. */
export async function staticRows(scheduler: TaskScheduler, plan: LogicalPlan): Promise<Row[]> {
  const source = plan.source;
  const task = (partition: number, input: InputSplit): StatelessTask => ({
    kind: 'stateless',
    queryId: 'static',
    runId: 'static',
    batchId: 0,
    partition,
    attempt: 0,
    input,
    inputSchema: source.schema,
    ops: plan.ops,
    output: { type: 'collect' },
  });
  let tasks: StatelessTask[];
  if (source.format === 'sqlite' || source.format === 'values') {
    const rows = source.format === 'values' ? source.rows : readSqliteRows(source.sqlite, source.schema);
    if (plan.ops.length === 0) return rows;
    tasks = [task(0, { type: 'rows', data: encodeRows(rows) })];
  } else {
    if (!('file' in source)) throw new SluiceError('NOT_STATIC', 'collect() needs a static DataFrame (session.read)');
    const { file } = source;
    const files = staticFiles(file.path);
    tasks = splitRange(0, files.length, scheduler.slots * 2).map(([a, b], partition) =>
      task(partition, { type: 'files', format: file.format, files: files.slice(a, b), schema: source.schema, options: file.read }),
    );
  }
  const results = await scheduler.runTasks(tasks);
  return results.flatMap((r) => (r.rows ? decodeRows(r.rows) : []));
}
