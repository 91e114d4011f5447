/**
 * The map sides of stateful operators fed one row at a time (a map task whose operators run as
 * rows), and the task-local keys they group by: the task's rows, after the operators before the
 * shuffle, become records hashed to key groups and encoded in one block per partition (record
 * layout in shuffleCodec.ts). Each kind's task part (tasks.ts) picks its map side.
 *
 * An aggregation combines the task's rows of each key into one partial (Spark's partial
 * aggregation), so a block carries keys, not rows: its rows are batched into columns for the one
 * map-side aggregation (columns/columnAggregate.ts). A processor's rows go grouped by key. The map
 * sides of a deduplication and of a join of two streams are in dedup/task.ts and join/task.ts.
 */
import { compileExpr } from '../expressions/compileExpr.js';
import { exprType } from '../expressions/exprTypes.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import { CompileCache } from '../compileCache.js';
import { columnAggregation } from '../columns/columnAggregate.js';
import { BATCH_ROWS } from '../columns/columnSources.js';
import { batchFromRows } from '../columns/vectors.js';
import type { StateLayoutMsg } from '../task/messages.js';
import { ShuffleWriter } from '../shuffle/ShuffleWriter.js';
import type { Partials } from './operator.js';
import type { StatefulOp, TransformWithStateOp } from './types.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { isArrayType, isAtomicType, isMapType, isNumberBacked, isStructType } from '../schema/values.js';

// ---------------------------------------------------------------------------------------------
// Task-local keys

/**
 * A string that identifies a key value within one task, cheaper than the canonical bytes (the
 * seed query combines a million rows a batch, most into existing groups). Each part is
 * self-delimiting, so a tuple of parts is too: numbers end with '|' (String is exact, and merges
 * -0 with 0 and every NaN, as encodeKey does), strings carry their length. Equal parts mean equal
 * canonical keys, so combining by it never merges keys that the state keeps apart.
 */
type KeyPart = (v: unknown) => string;

export function keyPart(type: DataType): KeyPart {
  if (isArrayType(type)) {
    const element = keyPart(type.array);
    return (v) => (v == null ? 'n|' : `[${(v as unknown[]).length}:${(v as unknown[]).map(element).join('')}]`);
  }
  if (isMapType(type)) {
    const key = keyPart(type.map.key);
    const value = keyPart(type.map.value);
    return (v) =>
      v == null ? 'n|' : `<${(v as Array<[unknown, unknown]>).length}:${(v as Array<[unknown, unknown]>).map(([k, x]) => key(k) + value(x)).join('')}>`;
  }
  if (isStructType(type)) {
    const fields = type.struct.map((f) => ({ name: f.name, part: keyPart(f.type) }));
    return (v) => {
      if (v == null) return 'n|';
      let s = '{';
      for (const f of fields) s += f.part((v as Row)[f.name]);
      return `${s}}`;
    };
  }
  if (type === 'string') return (v) => (v == null ? 'n|' : `${(v as string).length}:${v as string}`);
  if (type === 'boolean') return (v) => (v == null ? 'n|' : v ? 't|' : 'f|');
  return (v) => (v == null ? 'n|' : `${v as number}|`);
}

/** Key values as they are sent: -0 becomes 0, as in the canonical encoding (Spark normalizes it too). */
export function normalizer(type: DataType): ((v: unknown) => unknown) | undefined {
  return isNumberBacked(type) ? (v) => (v === 0 ? 0 : v) : undefined;
}

// ---------------------------------------------------------------------------------------------
// A processor's rows (transformWithState): every row is sent, the task's rows of a key in one
// record under their grouping key (a null is a key)

export function groupPartials(op: TransformWithStateOp, schema: Schema, layout: StateLayoutMsg, udfs: UdfRegistry): Partials {
  const keys = op.keys.map((k) => {
    const type = exprType(k, schema);
    return { ev: compileExpr(k, schema, udfs), part: keyPart(type), norm: normalizer(type) ?? ((v: unknown) => v ?? null), type };
  });
  // One key of an atomic type groups by its value itself (a Map merges -0 with 0 and NaN with NaN, as the key encoding does).
  const single = keys.length === 1 && isAtomicType((keys[0] as (typeof keys)[number]).type) ? (keys[0] as (typeof keys)[number]) : undefined;
  const groups = new Map<unknown, { values: unknown[]; rows: Row[] }>();
  return {
    add(row) {
      if (single !== undefined) {
        const raw = single.ev(row);
        const v = raw === undefined ? null : raw;
        const group = groups.get(v);
        if (group === undefined) groups.set(v, { values: [single.norm(v)], rows: [row] });
        else group.rows.push(row);
        return;
      }
      let id = '';
      const values = keys.map((k) => {
        const v = k.ev(row);
        id += k.part(v);
        return v;
      });
      const group = groups.get(id);
      if (group === undefined) groups.set(id, { values: values.map((v, i) => (keys[i] as (typeof keys)[number]).norm(v)), rows: [row] });
      else group.rows.push(row);
    },
    finish() {
      const writer = new ShuffleWriter(
        layout,
        keys.map((k) => k.type),
      );
      for (const { values, rows } of groups.values()) writer.addGroup(values, rows);
      return { blocks: writer.finish(), numRecords: groups.size, numLate: 0 };
    },
  };
}

// ---------------------------------------------------------------------------------------------

const aggregations = new CompileCache<ReturnType<typeof columnAggregation>>();

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

/** An aggregation's partials: rows in batches of BATCH_ROWS, for the one column aggregation (it holds no row between batches). */
export function aggregationPartials(op: AggregateOp, schema: Schema, layout: StateLayoutMsg, udfs: UdfRegistry): Partials {
  const aggregation = aggregations.of(JSON.stringify([schema, op]), () => columnAggregation(op, schema, udfs))();
  let rows: Row[] = [];
  const flush = (): void => {
    if (rows.length > 0) aggregation.add(batchFromRows(rows, schema));
    rows = [];
  };
  return {
    add(row) {
      rows.push(row);
      if (rows.length === BATCH_ROWS) flush();
    },
    finish() {
      flush();
      const writer = new ShuffleWriter(
        layout,
        op.keys.map((k) => exprType(k, schema)),
        op.routeKeys,
      );
      const numRecords = aggregation.finish(writer);
      return { blocks: writer.finish(), numRecords, numLate: 0 };
    },
  };
}
