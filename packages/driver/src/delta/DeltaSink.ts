/**
 * `writeStream.format('delta')`: each batch is one commit of a Delta table (reader version 1,
 * writer version 2), exactly once by Delta's own mechanism, as its streaming sink does it: the
 * commit carries a `txn` action with the query's id as appId and the batch id as version, and a
 * batch whose id the table's txn has reached is skipped.
 *
 * Tasks write Parquet part files into the table directory (partitionBy: under Hive directories) and
 * fsync them; the driver then writes commit `<version>.json` exclusively (createFileExclusive of
 * @sluice/state), by linking a complete, fsynced temporary file to its name: a name another writer took first (a lost race) is retried at
 * the next version after re-reading the log, and if that writer's commit already holds this batch
 * the batch is done. The first commit also carries `protocol` and `metaData`; in complete mode a
 * commit removes every file the table held (its rows are the whole result). Every 10th version
 * gets a Parquet checkpoint of the table's state and `_last_checkpoint`, as Delta writes them.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { partitionValuesOf, schemaToDDL, writeParquet, type Row, type Schema, type TaskOutput, type WriteOptions } from '@sluice/executor';
import { createFileExclusive, fsyncDir, replaceFile, SluiceError, warn } from '@sluice/state';
import { prepareWritableDir } from '../checkpoint/directories.js';
import type { BatchOutput, StreamSink } from '../sinks/Sink.js';
import { CHECKPOINT_SCHEMA, commitPath, LOG_DIR, snapshotAt, versionName, type Action, type AddAction, type Snapshot } from './log.js';
import { deltaSchema, sparkSchemaString } from './schema.js';

/** Delta writes a checkpoint every this many commits (delta.checkpointInterval's default). */
export const CHECKPOINT_INTERVAL = 10;
/** Commits tried, at successive versions, before a batch gives up on a table other writers keep taking. */
const COMMIT_ATTEMPTS = 10;

export class DeltaSink implements StreamSink {
  readonly description: string;
  private queryId: string | undefined;
  /** The table's latest version and this query's txn version, as last read or written. */
  private latest = -1;
  private txn = -1;
  private readonly runTag = randomUUID();

  constructor(
    private readonly table: string,
    private readonly schema: Schema,
    private readonly options: WriteOptions,
    private readonly partitionBy: string[],
  ) {
    this.description = `DeltaSink[${table}]`;
  }

  taskOutput(batchId: number, partition: number, committed: boolean): TaskOutput {
    const codec = this.options.compression ?? 'snappy';
    const ext = codec === 'none' || codec === 'uncompressed' ? 'parquet' : `${codec}.parquet`;
    return {
      type: 'file',
      format: 'parquet',
      dir: this.table,
      fileName: `part-${String(partition).padStart(5, '0')}-${this.runTag}-b${batchId}.c000.${ext}`,
      options: this.options,
      skip: committed,
      ...(this.partitionBy.length > 0 && { partitionBy: this.partitionBy }),
    };
  }

  /** The table as the log has it now, or undefined when it has no commit yet. */
  private read(): Snapshot | undefined {
    if (!existsSync(join(this.table, LOG_DIR))) return undefined;
    try {
      return snapshotAt(this.table);
    } catch (e) {
      if (e instanceof SluiceError && e.code === 'DELTA_TABLE_NOT_FOUND') return undefined;
      throw e;
    }
  }

  private refresh(): Snapshot | undefined {
    const snapshot = this.read();
    this.latest = snapshot?.version ?? -1;
    this.txn = (this.queryId !== undefined ? snapshot?.txns.get(this.queryId) : undefined) ?? -1;
    return snapshot;
  }

  /**
   * The table must take this query's rows: the same schema and partition columns when it exists.
   * Its txn for this query must have reached the checkpoint's last committed data batch, else that
   * batch's rows are not in the table (SINK_CORRUPT).
   */
  prepare(query: { queryId: string; lastCommittedBatchId: number; isControlBatch(batchId: number): boolean }): void {
    prepareWritableDir(this.table, 'sink');
    this.queryId = query.queryId;
    const snapshot = this.refresh();
    if (snapshot !== undefined) {
      const theirs = schemaToDDL(snapshot.schema);
      // As the table would declare it: every column nullable, as a streaming write declares them.
      const ours = schemaToDDL(deltaSchema(sparkSchemaString(this.schema), this.table));
      if (theirs !== ours || snapshot.metadata.partitionColumns.join() !== this.partitionBy.join()) {
        throw new SluiceError(
          'TABLE_SCHEMA_MISMATCH',
          `Delta table ${this.table} has schema '${theirs}' partitioned by [${snapshot.metadata.partitionColumns.join(', ')}]; this query writes '${ours}' partitioned by [${this.partitionBy.join(', ')}]`,
          { file: this.table },
        );
      }
    }
    let lastData = query.lastCommittedBatchId;
    while (lastData >= 0 && query.isControlBatch(lastData)) lastData--;
    if (this.txn < lastData) {
      throw new SluiceError(
        'SINK_CORRUPT',
        `Delta table ${this.table} holds this query's batches up to ${this.txn}, but the checkpoint committed batch ${lastData}: its rows are lost`,
        { file: join(this.table, LOG_DIR) },
      );
    }
  }

  isCommitted(batchId: number): boolean {
    return this.txn >= batchId;
  }

  async addBatch(out: BatchOutput): Promise<void> {
    if (this.txn >= out.batchId) return; // a replay: the table holds the batch already
    const files = out.results.flatMap((r) => r.files ?? []);
    // The part files' directory entries must be durable before a commit names them.
    const dirs = new Set<string>();
    for (const f of files) for (let d = dirname(f.name); d !== '.'; d = dirname(d)) dirs.add(d);
    for (const d of [...dirs].sort((a, b) => b.length - a.length)) fsyncDir(join(this.table, d));
    if (files.length > 0) fsyncDir(this.table);
    const now = Date.now();
    const adds: AddAction[] = files.map((f) => ({
      path: f.name
        .split('/')
        .map((s) => encodeURIComponent(s).replaceAll('%3D', '='))
        .join('/'),
      partitionValues: partitionValuesOf(f.name) ?? {},
      size: f.size,
      modificationTime: Math.round(statSync(join(this.table, f.name)).mtimeMs),
      dataChange: true,
      stats: JSON.stringify({ numRecords: f.rows }),
    }));
    const complete = out.outputMode === 'complete';
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const version = this.latest + 1;
      const actions: Action[] = [
        {
          commitInfo: {
            timestamp: now,
            operation: 'STREAMING UPDATE',
            operationParameters: { outputMode: complete ? 'Complete' : 'Append', queryId: this.queryId, epochId: String(out.batchId) },
            isBlindAppend: !complete,
            engineInfo: 'Sluice',
          },
        },
        ...(version === 0 ? this.tableActions(now) : []),
        { txn: { appId: this.queryId as string, version: out.batchId, lastUpdated: now } },
        // Complete mode replaces the table's rows, as Delta's sink does: every live file is removed.
        ...(complete && version > 0
          ? [...snapshotAt(this.table, version - 1).files.values()].map(({ path, partitionValues, size }) => ({
              remove: { path, deletionTimestamp: now, dataChange: true, partitionValues, size },
            }))
          : []),
        ...adds.map((add) => ({ add })),
      ];
      // A name another writer took is false; a full disk is DISK_FULL naming the commit file.
      if (createFileExclusive(commitPath(this.table, version), `${actions.map((a) => JSON.stringify(a)).join('\n')}\n`, 'write the Delta commit')) {
        this.latest = version;
        this.txn = out.batchId;
        if (version > 0 && version % CHECKPOINT_INTERVAL === 0) this.checkpoint(version);
        return;
      }
      // Another writer took the version: read what the table holds now, and go on from there.
      this.refresh();
      if (this.txn >= out.batchId) return;
    }
    throw new SluiceError(
      'DELTA_COMMIT_CONFLICT',
      `Delta table ${this.table}: ${COMMIT_ATTEMPTS} commits of batch ${out.batchId} in a row lost their version to other writers`,
      { file: join(this.table, LOG_DIR) },
    );
  }

  /** A new table's protocol (reader 1, writer 2) and metaData. */
  private tableActions(now: number): Action[] {
    return [
      { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
      {
        metaData: {
          id: randomUUID(),
          format: { provider: 'parquet', options: {} },
          schemaString: sparkSchemaString(this.schema),
          partitionColumns: this.partitionBy,
          configuration: {},
          createdTime: now,
        },
      },
    ];
  }

  /** Writes the checkpoint of `version` and points _last_checkpoint at it; a failure leaves the log as it is (the commits hold everything). */
  private checkpoint(version: number): void {
    try {
      const snapshot = snapshotAt(this.table, version);
      const rows = checkpointRows(snapshot);
      const path = join(this.table, LOG_DIR, `${versionName(version)}.checkpoint.parquet`);
      replaceFile(path, writeParquet(rows, CHECKPOINT_SCHEMA, 'snappy'), 'write the Delta checkpoint');
      replaceFile(join(this.table, LOG_DIR, '_last_checkpoint'), `${JSON.stringify({ version, size: rows.length })}\n`, 'write the Delta checkpoint');
    } catch (e) {
      warn(
        'SLUICE_DELTA_CHECKPOINT_FAILED',
        `Delta table ${this.table}: the checkpoint of version ${version} was not written (${(e as Error).message}); readers replay the commits instead`,
      );
    }
  }
}

const entries = (o: Record<string, string | null> | undefined): Array<[string, string | null]> => Object.entries(o ?? {});

/** A snapshot as checkpoint rows, one action a row: protocol, metaData, txns, live files, tombstones. */
function checkpointRows(s: Snapshot): Row[] {
  const row = (action: Row): Row => ({ txn: null, add: null, remove: null, metaData: null, protocol: null, ...action });
  const m = s.metadata;
  return [
    row({ protocol: { minReaderVersion: s.protocol.minReaderVersion, minWriterVersion: s.protocol.minWriterVersion } }),
    row({
      metaData: {
        id: m.id,
        name: m.name ?? null,
        description: m.description ?? null,
        format: { provider: m.format.provider, options: entries(m.format.options) },
        schemaString: m.schemaString,
        partitionColumns: m.partitionColumns,
        configuration: entries(m.configuration),
        createdTime: m.createdTime ?? null,
      },
    }),
    ...[...s.txns].map(([appId, version]) => row({ txn: { appId, version, lastUpdated: null } })),
    ...[...s.files.values()].map((a) =>
      row({
        add: {
          path: a.path,
          partitionValues: entries(a.partitionValues),
          size: a.size,
          modificationTime: a.modificationTime,
          dataChange: false,
          stats: a.stats ?? null,
        },
      }),
    ),
    ...[...s.removed.values()].map((r) =>
      row({
        remove: {
          path: r.path,
          deletionTimestamp: r.deletionTimestamp ?? null,
          dataChange: false,
          partitionValues: entries(r.partitionValues),
          size: r.size ?? null,
        },
      }),
    ),
  ];
}

/** The schema a Delta table at `path` holds, for a query writing into it (none: a new table). */
export function deltaTableSchema(path: string): Schema | undefined {
  if (!existsSync(join(path, LOG_DIR))) return undefined;
  const s = snapshotAt(path);
  return deltaSchema(s.metadata.schemaString, path);
}
