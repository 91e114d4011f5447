/**
 * The rows of a static (batch) DataFrame over files, read by the executors: `collect()`, and the
 * static side of a stream-static join, which is read once per query run.
 */
import { relative, sep } from 'node:path';
import { decodeRows, encodeRows, kDefaultReadOptions, partitionValuesOf, type InputSplit, type Row, type Schema, type StatelessTask } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { LogicalPlan } from '../plan/LogicalPlan.js';
import type { TaskScheduler } from '../scheduler/TaskScheduler.js';
import { committedFiles } from '../sinks/FileSink.js';
import { listFiles } from '../sources/fileSystem.js';
import { filePieces, piecesSplit, taskRuns } from '../sources/filePieces.js';
import { statSync } from 'node:fs';
import { splitRange } from '../sources/RateSource.js';
import { readSqliteRows } from '../sources/sqliteTable.js';

/** The files a static read sees: a Sluice sink's committed files, else every file listed. */
export function staticFiles(dir: string): string[] {
  return committedFiles(dir) ?? listFiles(dir).map((f) => f.path);
}

/** Each file's partition values (its `col=value` directories under dir), or undefined when none has any. */
function partitionsOf(dir: string, files: string[]): Array<Record<string, string | null> | null> | undefined {
  const values = files.map((f) => partitionValuesOf(relative(dir, f).split(sep).join('/')));
  return values.some((v) => v !== null) ? values : undefined;
}

/**
 * The partition columns of a directory's files, with the types Spark infers for them: INT (or
 * LONG) when every value is an integer, DATE when every one is yyyy-MM-dd, else STRING.
 */
export function partitionColumns(dir: string): Schema {
  const byColumn = new Map<string, Array<string | null>>();
  for (const v of partitionsOf(dir, staticFiles(dir)) ?? []) {
    for (const [k, x] of Object.entries(v ?? {})) {
      const texts = byColumn.get(k);
      if (texts) texts.push(x);
      else byColumn.set(k, [x]);
    }
  }
  return [...byColumn].map(([name, texts]) => {
    const known = texts.filter((t): t is string => t !== null);
    const all = (re: RegExp): boolean => known.length > 0 && known.every((t) => re.test(t));
    const type = all(/^-?\d{1,9}$/) ? 'int' : all(/^-?\d{1,15}$/) ? 'long' : all(/^\d{4}-\d{2}-\d{2}$/) ? 'date' : 'string';
    return { name, type, nullable: true };
  });
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
  } else if (source.format === 'delta') {
    if (!('files' in source.delta)) throw new SluiceError('NOT_STATIC', 'collect() needs a static DataFrame (session.read)');
    tasks = taskRuns('parquet', source.delta.files, scheduler.slots * 2).map((run, partition) =>
      task(partition, { type: 'files', format: 'parquet', ...piecesSplit(run), schema: source.schema, options: kDefaultReadOptions }),
    );
  } else {
    if (!('file' in source)) throw new SluiceError('NOT_STATIC', 'collect() needs a static DataFrame (session.read)');
    const { file } = source;
    const listed = staticFiles(file.path);
    // Only Parquet files are ever cut (at row groups), so only theirs need sizes.
    const pieces = filePieces(
      file.format,
      listed.map((path) => ({ path, size: file.format === 'parquet' ? statSync(path).size : 0 })),
      scheduler.slots * 2,
    );
    const partitions = partitionsOf(
      file.path,
      pieces.map((p) => p.path),
    );
    tasks = splitRange(0, pieces.length, scheduler.slots * 2).map(([a, b], partition) =>
      task(partition, {
        type: 'files',
        format: file.format,
        ...piecesSplit(pieces.slice(a, b)),
        schema: source.schema,
        options: file.read,
        ...(partitions && { partitions: partitions.slice(a, b) }),
      }),
    );
  }
  const results = await scheduler.runTasks(tasks);
  return results.flatMap((r) => (r.rows ? decodeRows(r.rows) : []));
}
