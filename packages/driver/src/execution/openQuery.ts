/**
 * A query's start, before any batch: takes the checkpoint's lock, reads and checks what the
 * checkpoint holds (metadata, the state layout, the logs' tail, the sources' own logs, the sink),
 * and writes a new checkpoint's metadata and layout once all of that was validated, so that a
 * refused start leaves no checkpoint behind. Everything MicroBatchExecution's loop needs comes
 * back in one value; the loop itself does no I/O until it starts.
 */
import { CONF_KEYS, SluiceError, warn } from '@sluice/state';
import { BatchTransaction } from '../checkpoint/BatchTransaction.js';
import { CheckpointLock } from '../checkpoint/CheckpointLock.js';
import { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { prepareWritableDir } from '../checkpoint/directories.js';
import { OffsetLog } from '../checkpoint/OffsetLog.js';
import { loadQueryMetadata } from '../checkpoint/QueryMetadata.js';
import type { CheckpointTail } from '../checkpoint/recovery.js';
import { writeStateLayout } from '../checkpoint/StateLayoutFile.js';
import { writeVersioned } from '../checkpoint/versionedFile.js';
import { planInputs, statefulOperators, watermarkInputs, watermarkOf, type LogicalPlan } from '../plan/LogicalPlan.js';
import { checkStateSchema } from '../plan/processors.js';
import type { QuerySpec } from '../plan/QuerySpec.js';
import { createSource } from '../sources/createSource.js';
import type { StreamSource } from '../sources/Source.js';
import { askedCounts, nextBatch, type NextBatch, type RunSettings } from './nextBatch.js';
import { loadStateLayout, shardOptions, stateSettings, StatefulOperatorInfo, workerBudget } from './StatefulOperatorInfo.js';
import type { ExecutionContext } from './StreamExecution.js';
import { triggerExecutorOf, type TriggerExecutor } from './TriggerExecutor.js';

const K = CONF_KEYS;

export interface OpenedQuery {
  id: string;
  lock: CheckpointLock;
  paths: CheckpointPaths;
  sources: StreamSource[];
  triggers: TriggerExecutor;
  settings: RunSettings;
  /** The stateful operators by id, each with the layout its state has now. */
  operators: StatefulOperatorInfo[];
  /** The checkpoint's logs, with their tail as the start found it. */
  txn: (live: () => void) => BatchTransaction;
  /** sluice.sql.streaming.multipleWatermarkPolicy as the checkpoint pinned it. */
  watermarkPolicy: 'min' | 'max';
}

export function openQuery(ctx: ExecutionContext, plan: LogicalPlan, spec: QuerySpec, checkpointDir: string): OpenedQuery {
  prepareWritableDir(checkpointDir, 'checkpoint');
  const paths = new CheckpointPaths(checkpointDir);
  const lock = CheckpointLock.acquire(paths.lock, checkpointDir);
  try {
    return open(ctx, plan, spec, paths, lock);
  } catch (e) {
    spec.sink.close?.();
    lock.release();
    throw e;
  }
}

function open(ctx: ExecutionContext, plan: LogicalPlan, spec: QuerySpec, paths: CheckpointPaths, lock: CheckpointLock): OpenedQuery {
  const { conf } = ctx;
  const slots = ctx.scheduler.slots;
  const inputs = planInputs(plan);
  const planned = statefulOperators(plan);
  const loaded = loadQueryMetadata(
    paths.metadata,
    paths.root,
    planned.length > 0,
    conf.get(K.stateStoreKeyGroups),
    inputs.map(({ source }) => ({
      format: source.format,
      ...('file' in source && { path: source.file.path }),
      ...('delta' in source && { path: source.delta.path }),
    })),
  );
  const id = loaded.meta.id;
  const sources = inputs.map(({ source }, i) => createSource(source, i, paths, conf));
  const triggers = triggerExecutorOf(spec.trigger, conf.get(K.pollingDelay));
  const logs = BatchTransaction.readTail(paths);

  // Each stateful operator with its own layout (a repartition moves each one's state in turn).
  const layoutsToWrite: StatefulOperatorInfo[] = [];
  const operators = planned.map(({ stateful }, operatorId) => {
    // An earlier Sluice pinned its one operator's layout in metadata (recovery.ts's storedLayout reads it).
    const { decision, onDisk } = loadStateLayout(paths, loaded.legacyLayout, loaded.meta.keyGroups as number, conf, slots, logs.last !== undefined, operatorId);
    // The conf's mistakes are said once, of the first layout.
    if (operatorId === 0) for (const w of decision.warnings) warn('SLUICE_CONF_IGNORED', w);
    const info = new StatefulOperatorInfo(stateful, decision.current, paths, watermarkOf(plan) !== undefined, spec.outputMode, operatorId);
    if (!onDisk) layoutsToWrite.push(info);
    return info;
  });
  // Processors' state variables against the checkpoint's record of them (written with the rest below).
  const schemaWrites = planned.flatMap(({ stateful }, operatorId) => {
    const write = stateful.kind === 'transformWithState' ? checkStateSchema(paths, operatorId, stateful) : undefined;
    return write ? [write] : [];
  });
  if (operators.length > 0) {
    // A budget that cannot hold this query beside the others is refused at start.
    const shards = operators.reduce((n, info) => n + info.shards, 0);
    shardOptions(conf, workerBudget(conf, slots), shards, slots, ctx.otherStateShards(id), true);
  }
  // The checkpoint's tail holds every operator's layout, by operator id.
  const tail: CheckpointTail = { ...logs, layouts: operators.map((info) => info.layout) };
  const settings: RunSettings = {
    numSources: sources.length,
    ...(operators.length > 0 && { state: stateSettings(conf, slots) }),
    runsNoDataBatches: triggers.runsNoDataBatches && conf.get(K.noDataMicroBatchesEnabled),
    usesWatermark: operators.some((info) => info.usesWatermark),
  };
  // What the checkpoint leaves to do decides the layout the state ends up with: warn about it now.
  const offsetLog = new OffsetLog(paths.offsets);
  let first: NextBatch;
  try {
    first = nextBatch(tail, settings);
  } catch (e) {
    // An unfinished control batch this query cannot finish: name its entry.
    if (e instanceof SluiceError && tail.last) throw new SluiceError(e.code, e.message, { file: offsetLog.pathOf(tail.last.batchId) });
    throw e;
  }
  // The warning speaks of the first operator's shards, as it did before queries had several.
  const firstLayout = tail.layouts[0];
  if (firstLayout && settings.state) {
    const target = askedCounts(settings.state, first.kind === 'control' ? first.control.to : firstLayout);
    if (target.shards < slots) {
      warn(
        'SLUICE_STATE_SHARDS_BELOW_SLOTS',
        `query ${spec.queryName ?? id} keeps its state in ${target.shards} shard(s) on ${slots} slots, so its state stage uses only ${target.shards} of them; ` +
          `set ${K.stateStoreShards} to ${slots} (or 'auto') to spread the state over every slot (it is repartitioned at the next start)`,
      );
    }
  }
  // The ends the checkpoint planned (a replayed batch's are at or past those before it: checking them checks both).
  sources.forEach((s, i) => {
    s.verifyOffset?.(tail.last?.offsets[i] ?? null);
  });
  spec.sink.prepare?.({
    queryId: id,
    lastCommittedBatchId: tail.last === undefined ? -1 : tail.committed ? tail.last.batchId : tail.last.batchId - 1,
    isControlBatch: (batchId) => offsetLog.get(batchId)?.kind === 'control',
  });
  // Files are written only once everything above was validated. The layout goes first: metadata
  // on disk implies a layout file.
  for (const info of layoutsToWrite) writeStateLayout(paths.stateLayout(info.operatorId), { ...info.layout, operator: info.operatorName });
  for (const write of schemaWrites) write();
  if (loaded.write) writeVersioned(paths.metadata, loaded.meta);
  if (triggers.pinsAvailableData) for (const s of sources) s.prepareForAvailableNow?.();
  return {
    id,
    lock,
    paths,
    sources,
    triggers,
    settings,
    operators,
    txn: (live) => new BatchTransaction(paths, { retain: conf.get(K.minBatchesToRetain), sink: spec.sink, live }, tail),
    watermarkPolicy: pinnedPolicy(tail.last?.conf, conf.get(K.multipleWatermarkPolicy), watermarkInputs(plan).length),
  };
}

/**
 * The multiple-watermark policy of a checkpoint: the one its offsets entries pinned, as Spark
 * keeps it over a restart with another session conf (with a warning); the conf's for a new
 * checkpoint, or one of an earlier Sluice that pinned none.
 */
function pinnedPolicy(pinned: Record<string, unknown> | undefined, asked: 'min' | 'max', inputs: number): 'min' | 'max' {
  const value = pinned?.[WATERMARK_POLICY_CONF];
  if (value !== 'min' && value !== 'max') return asked;
  if (value !== asked && inputs > 1) {
    warn('SLUICE_CONF_IGNORED', `${K.multipleWatermarkPolicy}=${asked} is ignored: this checkpoint keeps the ${value} policy, as in Spark`);
  }
  return value;
}

/** The key of the watermark policy in an offsets entry's conf. */
export const WATERMARK_POLICY_CONF = 'multipleWatermarkPolicy';
