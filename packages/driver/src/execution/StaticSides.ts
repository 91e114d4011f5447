/**
 * The static sides of a query's joins, read once per run before its first batch. A side up to
 * sluice.sql.autoBroadcastJoinThreshold is broadcast: every task of the run shares its rows in a
 * SharedArrayBuffer. A larger one is split by its join keys (the executor's partitionRows, the
 * function the stream's exchange tasks use), and the stream is shuffled by the same keys, each
 * reduce task joining one partition with its part; that needs a stateless query with this one
 * join and no other shuffle, and elsewhere the side is broadcast all the same (with a warning).
 */
import { broadcastRows, packInitialState, partitionRows, type Expr } from '@sluice/executor';
import { CONF_KEYS, warn } from '@sluice/state';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import type { LogicalPlan } from '../plan/LogicalPlan.js';
import type { TaskScheduler } from '../scheduler/TaskScheduler.js';
import { staticRows } from './staticRows.js';

const K = CONF_KEYS;

/**
 * A join whose static side is too large to broadcast: the stream is shuffled by the join keys, and
 * each reduce task joins its partition with that partition of the static side.
 */
export interface JoinShuffle {
  /** Index in `plan.ops` of the join. */
  at: number;
  keys: Expr[];
  partitions: number;
  /** The static side's rows, by partition (placed as the stream's rows are). */
  parts: SharedArrayBuffer[];
}

export interface StaticSides {
  /** Broadcast sides, by the plan id of their join. */
  broadcasts: ReadonlyMap<string, SharedArrayBuffer>;
  joinShuffle?: JoinShuffle;
  /** The rows of transformWithState initial states (packed for the state tasks), by the id their operator names; read for the first batch only. */
  initialStates?: ReadonlyMap<string, Uint8Array>;
}

export async function readStaticSides(plan: LogicalPlan, scheduler: TaskScheduler, conf: RuntimeConf, firstBatch = false): Promise<StaticSides> {
  const initialStates = new Map<string, Uint8Array>();
  if (firstBatch) for (const s of plan.initialStates ?? []) initialStates.set(s.id, packInitialState(await staticRows(scheduler, s.plan)));
  const threshold = conf.get(K.autoBroadcastJoinThreshold);
  const broadcasts = new Map<string, SharedArrayBuffer>();
  let joinShuffle: JoinShuffle | undefined;
  for (const s of plan.statics ?? []) {
    const rows = await staticRows(scheduler, s.plan);
    const shared = broadcastRows(rows);
    if (threshold >= 0 && shared.byteLength <= threshold) {
      broadcasts.set(s.id, shared);
      continue;
    }
    const at = plan.ops.findIndex((o) => o.kind === 'join' && o.broadcastId === s.id);
    const join = plan.ops[at];
    const alone = at >= 0 && !plan.operators && !plan.exchange && !plan.inputs && (plan.statics?.length ?? 0) === 1;
    if (!alone || join?.kind !== 'join') {
      warn(
        'SLUICE_BROADCAST_OVER_THRESHOLD',
        `the static side of a join is ${shared.byteLength} bytes, over ${K.autoBroadcastJoinThreshold}=${threshold}, but this query cannot shuffle for it (an aggregation, a repartition, a union or another join): it is broadcast`,
      );
      broadcasts.set(s.id, shared);
      continue;
    }
    const asked = conf.get(K.shufflePartitions);
    const partitions = asked === 'auto' ? Math.max(scheduler.slots, Math.ceil(shared.byteLength / conf.get(K.advisoryPartitionSizeInBytes))) : asked;
    const parts = partitionRows(rows, join.rightKeys ?? join.keys, join.rightSchema, partitions);
    joinShuffle = { at, keys: join.keys.map((name): Expr => ({ op: 'col', name })), partitions, parts: parts.map((p) => broadcastRows(p)) };
  }
  return { broadcasts, ...(joinShuffle && { joinShuffle }), ...(initialStates.size > 0 && { initialStates }) };
}
