#!/usr/bin/env node
/**
 * `sluice`: the operators' command line.
 *
 *   sluice checkpoint inspect <dir> [--json]
 *   sluice checkpoint repartition <dir> --partitions N [--shards S]
 */
import { Command, InvalidArgumentError } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { SluiceError } from '@sluice/state';
import { inspectCheckpoint, repartitionCheckpoint, type CheckpointReport } from './checkpointTool.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function printReport(r: CheckpointReport): void {
  const out: string[] = [];
  out.push(`checkpoint  ${r.dir}`);
  out.push(`query id    ${r.queryId} (created ${r.createdAt})`);
  out.push(`sources     ${r.sources.map((s) => `${s.format}${s.path ? ` ${s.path}` : ''}`).join(', ') || '(not recorded)'}`);
  const last = r.lastBatch;
  out.push(
    `last batch  ${last.planned === null ? 'none' : `${last.planned} (${last.kind})`}; committed ${last.committed ?? 'none'}${last.uncommitted ? '; the last one is uncommitted' : ''}`,
  );
  if (r.pinned.keyGroups !== undefined) out.push(`pinned      key hash ${r.pinned.keyHash ?? '?'}, ${r.pinned.keyGroups} key groups`);
  const operators = r.operators ?? (r.state ? [r.state] : []);
  for (const op of operators) {
    const id = operators.length > 1 ? ` ${op.operatorId}` : '';
    out.push(`state${id.padEnd(7)}${op.operator ? `${op.operator}: ` : ''}${op.layout.partitions} partitions in ${op.layout.shards} shards`);
    for (const s of op.shards) {
      const span = s.partitions.length === 0 ? 'no partitions' : `${s.partitions.length} partitions (${s.partitions[0]}..${s.partitions.at(-1)})`;
      out.push(`  shard ${s.shard}: ${span}, ${s.rows} rows, ${s.bytes} bytes, last committed batch ${s.marker}`);
    }
    out.push('  partition  shard       rows      bytes');
    for (const p of op.partitions) {
      out.push(`  ${String(p.partition).padStart(9)}  ${String(p.shard).padStart(5)}  ${String(p.rows).padStart(9)}  ${String(p.bytes).padStart(9)}`);
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

const program = new Command('sluice').description('Operate on Sluice checkpoints').showHelpAfterError();
const checkpoint = program.command('checkpoint').description('inspect or repartition a checkpoint that no query is using');

checkpoint
  .command('inspect')
  .argument('<dir>', 'the checkpoint directory')
  .option('--json', 'print JSON')
  .description('query id, last batch, pinned settings, state layout, rows and bytes per shard and partition')
  .action(async (dir: string, opts: { json?: boolean }) => {
    const report = await inspectCheckpoint(dir);
    if (opts.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else printReport(report);
  });

checkpoint
  .command('repartition')
  .argument('<dir>', 'the checkpoint directory')
  .requiredOption('--partitions <n>', 'the new state partition count', positiveInt)
  .option('--shards <s>', 'the new shard count (default: keep it)', positiveInt)
  .option('--min-batches-to-retain <n>', "offset and commit log entries kept, as the query's sluice.sql.streaming.minBatchesToRetain", positiveInt, 100)
  .description('run the REPARTITION control batches that a start with these counts would run, without the query')
  .action(async (dir: string, opts: { partitions: number; shards?: number; minBatchesToRetain: number }) => {
    let bar: SingleBar | undefined;
    const { batches, layout } = await repartitionCheckpoint(dir, opts.partitions, opts.shards, {
      minBatchesToRetain: opts.minBatchesToRetain,
      onPlan: async (estimate) => {
        bar?.stop();
        bar = undefined;
        // The estimate opens every shard: only for a bar someone sees.
        if (!process.stderr.isTTY) return;
        const total = await estimate();
        if (total === 0) return;
        bar = new SingleBar({ format: 'moving state [{bar}] {value}/{total} rows', clearOnComplete: false, stream: process.stderr }, Presets.shades_classic);
        bar.start(total, 0);
      },
      onRows: (rows) => bar?.increment(rows),
    });
    if (bar) {
      bar.update(bar.getTotal());
      bar.stop();
    }
    // As `kubectl scale` to the same count: say so, and succeed.
    if (batches.length === 0) process.stdout.write(`${dir} already has ${layout.partitions} partitions in ${layout.shards} shards: nothing to move\n`);
    for (const r of batches) {
      process.stdout.write(
        `repartitioned ${dir}${r.operatorId > 0 ? ` (stateful operator ${r.operatorId})` : ''} in control batch ${r.batchId}: ${r.from.partitions} partitions in ${r.from.shards} shards -> ` +
          `${r.to.partitions} in ${r.to.shards}; moved ${r.numKeyGroupsMoved} key groups, ${r.numRowsMoved} rows, ` +
          `${r.numBytesMoved} bytes in ${r.durationMs} ms\n`,
      );
    }
  });

program.parseAsync(process.argv).catch((e: unknown) => {
  const code = e instanceof SluiceError ? `${e.code}: ` : '';
  process.stderr.write(`sluice: ${code}${(e as Error)?.message ?? String(e)}\n`);
  process.exitCode = 1;
});
