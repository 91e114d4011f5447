/** Shared by the map-side and state-task tests: the partials of an array of rows, and a reference for them. */
import { encodeKey } from '@sluice/state';
import type { PartitionedPartials } from './operator.js';
import { streamPartials } from './tasks.js';
import { aggregatorOf, compileAggInput, eventTimeOfKey, windowOfKey, type AggBuffer } from './aggregates.js';
import { compileExpr } from '../expressions/compileExpr.js';
import { exprType } from '../expressions/exprTypes.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import { windowsOf } from '../expressions/windows.js';
import { ShuffleWriter } from '../shuffle/ShuffleWriter.js';
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
  joinSide: 0 | 1 = 0,
): PartitionedPartials {
  const stream = streamPartials(op, schema, layout, udfs, lateThresholdMs, joinSide);
  for (const row of rows) stream.add(row);
  return stream.finish();
}

/**
 * What an aggregation's map side must send for `rows`, computed the plain way: a Map from each
 * key's canonical encoding to its values and aggregates.ts buffers, in first-seen order, each
 * updated in row order (a sliding window key in each of the row's windows, a null time in none),
 * written with ShuffleWriter.addAggregate. The engine's one implementation must give these bytes.
 */
export function referencePartials(
  rows: readonly Row[],
  op: Extract<StatefulOp, { kind: 'aggregate' }>,
  schema: Schema,
  layout: StateLayoutMsg,
): PartitionedPartials {
  const keyTypes = op.keys.map((k) => exprType(k, schema));
  const keys = op.keys.map((k) => {
    const win = windowOfKey(k);
    return win ? { win, ev: compileExpr(win.expr, schema) } : { ev: compileExpr(k, schema) };
  });
  const aggs = op.aggs.map((a) => aggregatorOf(a, schema));
  const inputs = op.aggs.map((a) => compileAggInput(a, schema));
  const groups = new Map<string, { values: unknown[]; buffers: AggBuffer[] }>();
  for (const row of rows) {
    let tuples: unknown[][] = [[]];
    for (const k of keys) {
      const v = k.ev(row);
      if (!k.win) {
        // -0 is sent as 0, as the canonical encoding has it.
        tuples = tuples.map((t) => [...t, v === 0 ? 0 : v]);
        continue;
      }
      const { sizeMs, slideMs, startMs } = k.win;
      const windows = v == null ? [] : windowsOf(v as number, sizeMs, slideMs, startMs);
      tuples = tuples.flatMap((t) => windows.map((w) => [...t, { start: w.start, end: w.end }]));
    }
    const args = inputs.map((ev) => (ev === null ? null : ev(row)));
    for (const values of tuples) {
      const id = Buffer.from(encodeKey(values, keyTypes)).toString('latin1');
      let g = groups.get(id);
      if (g === undefined) {
        g = { values, buffers: aggs.map((a) => a.newBuffer()) };
        groups.set(id, g);
      }
      g.buffers = g.buffers.map((b, j) => aggs[j]!.update(b, args[j]));
    }
  }
  const timeOf = eventTimeOfKey(op, keyTypes);
  const writer = new ShuffleWriter(layout, keyTypes);
  for (const g of groups.values()) writer.addAggregate(g.values, timeOf ? timeOf(g.values) : null, g.buffers);
  return { blocks: writer.finish(), numRecords: groups.size, numLate: 0 };
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
