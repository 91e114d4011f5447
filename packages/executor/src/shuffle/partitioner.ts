/**
 * The partition of a row in a stateless shuffle by key (repartition(n, cols), and a stream-static
 * join too large to broadcast): murmur3-32 of the key's canonical encoding (@sluice/state's
 * keyEncoding, the one state keys use), modulo the partition count. It is the one function on
 * both sides of the thread boundary: the workers' exchange tasks split the stream with it, and
 * the driver splits a join's static side with it, so equal keys meet in one partition. Numbers
 * encode as doubles whatever their column type (an INT key meets a LONG one), -0 as 0 and every
 * NaN as one NaN.
 *
 * A stateful shuffle does not use it: its records go to the partition owning their key group
 * (ShuffleWriter), since state partitions own key-group ranges.
 */
import { encodeKey, murmur3_x86_32, type KeyType } from '@sluice/state';
import type { Row, Schema } from '../schema/types.js';

/** The partition, of `partitions`, of the key `values` read as `types`. */
export function shufflePartition(values: readonly unknown[], types: readonly KeyType[], partitions: number): number {
  return murmur3_x86_32(encodeKey(values, types)) % partitions;
}

/** Rows split into `partitions` lists by the columns `keys` of `schema`, as shufflePartition places them. */
export function partitionRows(rows: readonly Row[], keys: readonly string[], schema: Schema, partitions: number): Row[][] {
  const types = keys.map((k) => {
    const f = schema.find((x) => x.name === k);
    if (f === undefined) throw new Error(`partitionRows: no column ${k}`);
    return f.type;
  });
  const parts: Row[][] = Array.from({ length: partitions }, () => []);
  for (const r of rows)
    parts[
      shufflePartition(
        keys.map((k) => r[k] ?? null),
        types,
        partitions,
      )
    ]!.push(r);
  return parts;
}
