/**
 * Map side of a stateful batch fed one row at a time (a map task whose operators run as rows): the
 * task's rows, after the operators before the shuffle, become one record per state key, hashed to
 * key groups and encoded in one block per partition (record layout in shuffleCodec.ts).
 *
 * An aggregation combines the task's rows of each key into one partial (Spark's partial
 * aggregation), so a block carries keys, not rows: its rows are batched into columns for the one
 * map-side aggregation (columns/columnAggregate.ts). A deduplication keeps the first row per key;
 * a join of two streams sends every row of its side (MapTask.joinSide).
 */
import { statefulOutputSchema } from './aggregates.js';
import { compileExpr } from '../expressions/compileExpr.js';
import { exprType } from '../expressions/exprTypes.js';
import { loadUdfs, udfsIn, type UdfRegistry } from '../expressions/udfs.js';
import { CompileCache } from '../compileCache.js';
import { columnAggregation } from '../columns/columnAggregate.js';
import { BATCH_ROWS } from '../columns/columnSources.js';
import { batchFromRows } from '../columns/vectors.js';
import type { MapTask, ShuffleBlock, StateLayoutMsg } from '../task/messages.js';
import { resolveColumn } from '../expressions/resolveColumn.js';
import type { DedupRecord } from '../shuffle/shuffleCodec.js';
import { ShuffleWriter } from '../shuffle/ShuffleWriter.js';
import type { Expr } from '../expressions/types.js';
import { eventTimeOf, type JoinSide, type StreamJoinOp } from './streamJoin.js';
import { mapSideOp } from './sessionWindow.js';
import type { StatefulOp, TransformWithStateOp } from './types.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { isArrayType, isAtomicType, isMapType, isNumberBacked, isStructType } from '../schema/values.js';

export interface PartitionedPartials {
  /** One block per partition that has records, in partition order. */
  blocks: ShuffleBlock[];
  /** Records over all blocks: distinct keys of the task. */
  numRecords: number;
  /** Late rows dropped before keys were combined (deduplication with a late threshold). */
  numLate: number;
}

/** The first row of a deduplication key in the task. */
interface KeyEntry {
  values: unknown[];
  record(keyBytes: Uint8Array, keyGroup: number): DedupRecord;
}

interface Collector {
  add(row: Row): void;
  finish(): { entries: KeyEntry[]; late: number };
}

/** The deduplication step, compiled once per plan. */
interface MapSide {
  keyTypes: DataType[];
  /**
   * Takes rows one at a time (so a task never holds all of its rows at once) and gives one entry
   * per distinct key; rows at or below `lateThresholdMs` count as late.
   */
  collector(lateThresholdMs: number | null): Collector;
}

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

function keyPart(type: DataType): KeyPart {
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
function normalizer(type: DataType): ((v: unknown) => unknown) | undefined {
  return isNumberBacked(type) ? (v) => (v === 0 ? 0 : v) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Deduplication

type DedupOp = Extract<StatefulOp, { kind: 'dropDuplicates' | 'dropDuplicatesWithinWatermark' }>;

function compileDedup(op: DedupOp, schema: Schema): MapSide {
  statefulOutputSchema(op, schema); // the columns exist, the event time is a TIMESTAMP
  // dropDuplicates() without columns compares whole rows, as in Spark.
  const names = op.columns.length === 0 ? schema.map((f) => f.name) : op.columns;
  const keys = names.map((name) => {
    const type = resolveColumn(name, schema).field.type;
    return { ev: compileExpr({ op: 'col', name }, schema), part: keyPart(type), norm: normalizer(type), type };
  });
  const time = op.eventTimeColumn === null ? undefined : compileExpr({ op: 'col', name: op.eventTimeColumn }, schema);
  return {
    keyTypes: keys.map((k) => k.type),
    collector(lateThresholdMs) {
      const firsts = new Map<string, KeyEntry>();
      let late = 0;
      const add = (row: Row): void => {
        if (lateThresholdMs !== null && time !== undefined) {
          const t = time(row) as number | null;
          if (t !== null && t <= lateThresholdMs) {
            late += 1;
            return;
          }
        }
        let key = '';
        for (const k of keys) key += k.part(k.ev(row));
        if (firsts.has(key)) return;
        const values = keys.map((k) => (k.norm === undefined ? k.ev(row) : k.norm(k.ev(row))));
        const t = time === undefined ? null : ((time(row) as number | null) ?? null);
        firsts.set(key, { values, record: (keyBytes, kg): DedupRecord => [kg, keyBytes, row, t] });
      };
      return { add, finish: () => ({ entries: [...firsts.values()], late }) };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A join of two streams: every row of the side is sent, under its join key

function joinPartials(
  op: StreamJoinOp,
  side: JoinSide,
  layout: StateLayoutMsg,
  lateThresholdMs: number | null,
): { add(row: Row): void; finish(): PartitionedPartials } {
  const keys = side === 0 ? op.leftKeys : op.rightKeys;
  // Both sides encode keys with the left's types (the join checked that they are the same).
  const types = op.leftKeys.map((k) => resolveColumn(k, op.left.schema).field.type);
  const norms = types.map(normalizer);
  const time = (side === 0 ? op.left : op.right).eventTime;
  const writer = new ShuffleWriter(layout, types);
  let numRecords = 0;
  let numLate = 0;
  return {
    add(row) {
      if (lateThresholdMs !== null && time !== null) {
        const t = eventTimeOf(row[time]);
        if (t !== null && t <= lateThresholdMs) {
          numLate += 1;
          return;
        }
      }
      let values: unknown[] | null = [];
      for (let i = 0; i < keys.length; i++) {
        const v = row[keys[i] as string];
        if (v === null || v === undefined) {
          if (op.nullSafe?.[i] === true) {
            values.push(null);
            continue;
          }
          values = null;
          break;
        }
        const norm = norms[i];
        values.push(norm === undefined ? v : norm(v));
      }
      writer.addJoinRow(values, row, side);
      numRecords += 1;
    },
    finish: () => ({ blocks: writer.finish(), numRecords, numLate }),
  };
}

// ---------------------------------------------------------------------------------------------
// A processor's rows (transformWithState): every row is sent, the task's rows of a key in one
// record under their grouping key (a null is a key)

function groupPartials(
  op: TransformWithStateOp,
  schema: Schema,
  layout: StateLayoutMsg,
  udfs: UdfRegistry,
): { add(row: Row): void; finish(): PartitionedPartials } {
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

const dedups = new CompileCache<MapSide>();
const aggregations = new CompileCache<ReturnType<typeof columnAggregation>>();

function compileMapSide(op: DedupOp, schema: Schema): MapSide {
  return dedups.of(JSON.stringify([schema, op]), () => compileDedup(op, schema));
}

/** The expressions a map side evaluates, for loading their udfs before streamPartials. */
export function mapSideExprs(stateful: StatefulOp): Expr[] {
  const op = mapSideOp(stateful);
  if (op.kind === 'transformWithState') return op.keys;
  if (op.kind !== 'aggregate') return [];
  return [...op.keys, ...op.aggs.flatMap((a) => (a.arg === null ? [] : [a.arg]))];
}

/** Whether a map task calls a udf, in its operators or its stateful operator's keys and arguments. */
export function mapTaskCallsUdfs(task: Pick<MapTask, 'ops' | 'stateful'>): boolean {
  return udfsIn(task.ops).length > 0 || udfsIn(mapSideExprs(task.stateful)).length > 0;
}

/** Imports the udfs that `op`'s keys and aggregate arguments call (once per worker). */
export async function loadMapSideUdfs(op: StatefulOp, udfs: UdfRegistry): Promise<void> {
  await loadUdfs(mapSideExprs(op), udfs);
}

/**
 * A task's partials, fed one row at a time (rows of `schema`, entering the stateful operator):
 * `finish` encodes one record per key in one block per partition of `layout`. Synchronous: udfs
 * must be loaded.
 */
export function streamPartials(
  stateful: StatefulOp,
  schema: Schema,
  layout: StateLayoutMsg,
  udfs: UdfRegistry = new Map(),
  lateThresholdMs: number | null = null,
  joinSide: JoinSide = 0,
): { add(row: Row): void; finish(): PartitionedPartials } {
  const op = mapSideOp(stateful);
  if (op.kind === 'streamJoin') return joinPartials(op, joinSide, layout, lateThresholdMs);
  if (op.kind === 'transformWithState') return groupPartials(op, schema, layout, udfs);
  if (op.kind === 'aggregate') {
    // Rows in batches of BATCH_ROWS, for the one aggregation (it holds no row between batches).
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
  const side = compileMapSide(op, schema);
  const collector = side.collector(lateThresholdMs);
  return {
    add: collector.add,
    finish() {
      const { entries, late } = collector.finish();
      const writer = new ShuffleWriter(layout, side.keyTypes);
      for (const e of entries) writer.addDedup(e.values, e.record);
      return { blocks: writer.finish(), numRecords: entries.length, numLate: late };
    },
  };
}
