/** Shared by the map-side and state-task tests: the partials of an array of rows. */
import { streamPartials, type PartitionedPartials } from './mapSide.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import type { StateLayoutMsg } from '../task/messages.js';
import type { Row, Schema } from '../schema/types.js';
import type { StatefulOp } from './types.js';

/** streamPartials fed `rows` one at a time, as a map task feeds it. */
export function partitionPartials(
  rows: readonly Row[],
  op: StatefulOp,
  schema: Schema,
  layout: StateLayoutMsg,
  udfs: UdfRegistry = new Map(),
  lateThresholdMs: number | null = null,
): PartitionedPartials {
  const stream = streamPartials(op, schema, layout, udfs, lateThresholdMs);
  for (const row of rows) stream.add(row);
  return stream.finish();
}

/** A seeded generator (mulberry32), so that a failing test reproduces. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Rows in a fixed order (by their JSON), for comparing batches whose row order is not promised. */
export function sortRows(rows: Row[]): Row[] {
  const keyed = rows.map((row) => [JSON.stringify(row), row] as const);
  return keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, row]) => row);
}
