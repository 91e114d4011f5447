/**
 * Planning a state repartition (pure functions, tested without a disk).
 *
 * A key lives in key group kg; partition p owns the contiguous key groups
 * [floor(p·G/N), floor((p+1)·G/N)); the layout's table says which shard holds each partition. A
 * new partition count regroups the key groups; a new table decides where the new partitions go.
 * The planner keeps every partition where most of its key groups already are, and moves the
 * fewest partitions that balance the shards to within one partition: going from 2 to 3 shards
 * moves a third of the state, where contiguous blocks by formula would move half.
 *
 * The plan is the key-group ranges whose shard changes; only they are copied, and a shard that
 * neither gives nor receives is not written at all.
 */
import { keyGroupRange, partitionOfKeyGroup, validateLayout, type ShardAssignment, type StateLayout } from './layout.js';

/** A layout with its table: which shard holds each partition. */
export interface AssignedLayout extends StateLayout {
  shardOfPartition: ShardAssignment;
}

/** Key groups [kgStart, kgEnd) that move from shard `from` to shard `to`. */
export interface KeyGroupMove {
  kgStart: number;
  kgEnd: number;
  from: number;
  to: number;
}

export interface RepartitionPlan {
  layout: AssignedLayout;
  moves: KeyGroupMove[];
  /** Shards that give or receive key groups; the others are not touched. */
  touchedShards: number[];
  /** Key groups whose shard changes. */
  numKeyGroupsMoved: number;
}

/** The shard holding key group kg under `layout`. */
export function shardOfKeyGroupIn(kg: number, layout: AssignedLayout): number {
  return layout.shardOfPartition[partitionOfKeyGroup(kg, layout)] as number;
}

/**
 * The table of the new layout `to` (same key groups as `from`): each new partition goes to the
 * shard that holds most of its key groups, then shards over their share give away the partitions
 * that cost least to move, to shards under it. Every shard ends with floor(N/S) or ceil(N/S)
 * partitions.
 */
export function planShardAssignment(from: AssignedLayout, to: StateLayout): number[] {
  validateLayout(to);
  if (to.keyGroups !== from.keyGroups) throw new RangeError('a repartition keeps the key groups');
  const { partitions: n, shards: s } = to;
  // affinity[p]: key groups of new partition p per current shard (only shards that remain).
  const affinity: Array<Map<number, number>> = [];
  for (let p = 0; p < n; p++) {
    const a = new Map<number, number>();
    const [start, end] = keyGroupRange(p, to);
    for (let kg = start; kg < end; kg++) {
      const shard = shardOfKeyGroupIn(kg, from);
      if (shard < s) a.set(shard, (a.get(shard) ?? 0) + 1);
    }
    affinity.push(a);
  }
  const aff = (p: number, shard: number): number => (affinity[p] as Map<number, number>).get(shard) ?? 0;
  // The share of a partition's key groups a shard holds: partitions differ by one key group in size.
  const size = (p: number): number => {
    const [start, end] = keyGroupRange(p, to);
    return end - start;
  };
  const share = (p: number, shard: number): number => aff(p, shard) / size(p);
  const assign = affinity.map((a) => {
    let best = -1;
    let most = 0;
    for (const [shard, k] of a) if (k > most || (k === most && shard < best)) [best, most] = [shard, k];
    return best;
  });
  const count = Array.from({ length: s }, () => 0);
  for (const shard of assign) if (shard >= 0) count[shard] = (count[shard] as number) + 1;
  // Shares: floor(N/S) each, one more for the (N mod S) shards that want the most partitions.
  const base = Math.floor(n / s);
  const cap = Array.from({ length: s }, () => base);
  [...cap.keys()]
    .sort((a, b) => (count[b] as number) - (count[a] as number) || a - b)
    .slice(0, n % s)
    .forEach((shard) => {
      cap[shard] = base + 1;
    });
  // Over-full shards give away the partitions with the fewest of their key groups, and among
  // those the ones nearest another shard's, so that what moves stays at the shards' boundaries.
  const pool: number[] = [];
  assign.forEach((shard, p) => {
    if (shard < 0) pool.push(p);
  });
  const nearestOther = (p: number): number => {
    for (let d = 1; d < n; d++) {
      const l = assign[p - d];
      const r = assign[p + d];
      if ((l !== undefined && l !== assign[p]) || (r !== undefined && r !== assign[p])) return d;
    }
    return n;
  };
  const distance = assign.map((_, p) => nearestOther(p));
  for (let shard = 0; shard < s; shard++) {
    const mine = assign
      .flatMap((x, p) => (x === shard ? [p] : []))
      .sort((a, b) => share(a, shard) - share(b, shard) || (distance[a] as number) - (distance[b] as number) || b - a);
    for (let i = 0; i < (count[shard] as number) - (cap[shard] as number); i++) {
      const p = mine[i] as number;
      assign[p] = -1;
      pool.push(p);
    }
    count[shard] = Math.min(count[shard] as number, cap[shard] as number);
  }
  // Each given-away partition goes where it has the most key groups among shards with room.
  pool.sort((a, b) => a - b);
  for (const p of pool) {
    let best = -1;
    for (let shard = 0; shard < s; shard++) {
      if ((count[shard] as number) >= (cap[shard] as number)) continue;
      if (best < 0 || aff(p, shard) > aff(p, best)) best = shard;
    }
    assign[p] = best;
    count[best] = (count[best] as number) + 1;
  }
  return assign;
}

/** The plan that takes the state from layout `from` to the counts `to`. */
export function planRepartition(from: AssignedLayout, to: StateLayout): RepartitionPlan {
  const layout: AssignedLayout = { ...to, shardOfPartition: planShardAssignment(from, to) };
  return { layout, ...movesBetween(from, layout) };
}

/** The key-group ranges whose shard differs between two layouts of the same key groups. */
export function movesBetween(from: AssignedLayout, to: AssignedLayout): Omit<RepartitionPlan, 'layout'> {
  const moves: KeyGroupMove[] = [];
  let moved = 0;
  for (let kg = 0; kg < to.keyGroups; kg++) {
    const a = shardOfKeyGroupIn(kg, from);
    const b = shardOfKeyGroupIn(kg, to);
    if (a === b) continue;
    moved += 1;
    const last = moves.at(-1);
    if (last && last.kgEnd === kg && last.from === a && last.to === b) last.kgEnd = kg + 1;
    else moves.push({ kgStart: kg, kgEnd: kg + 1, from: a, to: b });
  }
  const touched = new Set<number>();
  for (const m of moves) touched.add(m.from).add(m.to);
  return { moves, touchedShards: [...touched].sort((a, b) => a - b), numKeyGroupsMoved: moved };
}
