/**
 * Map side of a stateful batch: the rows of one task, after the operators before the shuffle,
 * become one record per state key, hashed to key groups and encoded in one block per partition
 * (record layout in shuffleCodec.ts).
 *
 * An aggregation combines the task's rows of each key into one partial (Spark's partial
 * aggregation), so a block carries keys, not rows. A sliding window key puts a row in every
 * window containing its time; a row whose window time is null belongs to no window and is
 * dropped, as Spark's TimeWindowing filter does. A deduplication keeps the first row per key.
 */
import { aggregateOutputSchema, aggregatorOf, compileAggInput, eventTimeOfKey, statefulOutputSchema, windowOfKey, type AggBuffer, type Aggregator } from './aggregates.js';
import { compileExpr, type Evaluator } from '../expressions/compileExpr.js';
import { exprType } from '../expressions/exprTypes.js';
import { loadUdfs, type UdfRegistry } from '../expressions/udfs.js';
import type { ShuffleBlock, StateLayoutMsg } from '../task/messages.js';
import { resolveColumn } from '../expressions/resolveColumn.js';
import type { DedupRecord } from '../shuffle/shuffleCodec.js';
import { ShuffleWriter } from '../shuffle/ShuffleWriter.js';
import type { Expr } from '../expressions/types.js';
import type { StatefulOp } from './types.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { isNumericType, isStructType } from '../schema/values.js';
import { lastWindowStart, windowsOf } from '../expressions/windows.js';

export interface PartitionedPartials {
  /** One block per partition that has records, in partition order. */
  blocks: ShuffleBlock[];
  /** Records over all blocks: distinct keys of the task. */
  numRecords: number;
  /** Late rows dropped before keys were combined (deduplication with a late threshold). */
  numLate: number;
}

/** A key of the task: an aggregation partial, or the first row of a deduplication key. */
interface KeyEntry {
  values: unknown[];
  /** Aggregation: event time of the key (window end, or the watermarked column), null if none. */
  eventTimeMs?: number | null;
  buffers?: AggBuffer[];
  /** Deduplication. */
  record?(keyBytes: Uint8Array, keyGroup: number): DedupRecord;
}

interface Collector {
  add(row: Row): void;
  finish(): { entries: KeyEntry[]; late: number };
}

/** The combining step of one stateful operator, compiled once per plan. */
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
  return isNumericType(type) || type === 'timestamp' ? (v) => (v === 0 ? 0 : v) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Aggregation

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

interface Partial {
  values: unknown[];
  buffers: AggBuffer[];
}

function compileAggregate(op: AggregateOp, schema: Schema, udfs: UdfRegistry): MapSide {
  aggregateOutputSchema(op, schema); // one window at most, names, types
  const windowIndex = op.keys.findIndex((k) => windowOfKey(k) !== undefined);
  const win = windowIndex < 0 ? undefined : windowOfKey(op.keys[windowIndex]!);
  const keyTypes = op.keys.map((k) => exprType(k, schema));
  // The window comes last in the task-local key, so its start alone identifies it.
  const plain = op.keys.flatMap((k, i) => {
    if (i === windowIndex) return [];
    const type = keyTypes[i]!;
    return [{ i, ev: compileExpr(k, schema, udfs), part: keyPart(type), norm: normalizer(type) }];
  });
  const time: Evaluator | undefined = win && compileExpr(win.expr, schema, udfs);
  const aggs: Aggregator[] = op.aggs.map((s) => aggregatorOf(s, schema));
  const inputs = op.aggs.map((s) => compileAggInput(s, schema, udfs));
  const numAggs = aggs.length;

  // The task's groups form a trie of Maps: one level keyed by window start (when there is a
  // window; few distinct values, so it comes first), then one per plain key, whose last level holds
  // the partial. Map keys are the values themselves (SameValueZero merges -0 with 0 and NaN with
  // NaN, as the canonical encoding does), so a row builds no key string; structs use their key part.
  const mapKeys = plain.map((k) => (isStructType(keyTypes[k.i]!) ? k.part : (v: unknown) => v ?? null));
  const depth = plain.length;

  function collector(): Collector {
    const root = new Map<unknown, unknown>();
    const partials: Partial[] = [];
    const values: unknown[] = new Array(op.keys.length).fill(null);
    const parts: unknown[] = new Array(depth).fill(null);
    const args: unknown[] = new Array(numAggs).fill(null);
    const combine = (windowStart: number): void => {
      let node = root;
      if (win !== undefined) {
        let next = node.get(windowStart) as Map<unknown, unknown> | undefined;
        if (next === undefined) root.set(windowStart, (next = new Map()));
        node = next;
      }
      for (let i = 0; i < depth - 1; i++) {
        let next = node.get(parts[i]) as Map<unknown, unknown> | undefined;
        if (next === undefined) node.set(parts[i], (next = new Map()));
        node = next;
      }
      const last = depth === 0 ? null : parts[depth - 1];
      let p = node.get(last) as Partial | undefined;
      if (p === undefined) {
        const vs = values.slice();
        for (const k of plain) if (k.norm !== undefined) vs[k.i] = k.norm(vs[k.i]);
        if (win !== undefined) vs[windowIndex] = { start: windowStart, end: windowStart + win.sizeMs };
        p = { values: vs, buffers: aggs.map((a) => a.newBuffer()) };
        node.set(last, p);
        partials.push(p);
      }
      const b = p.buffers;
      for (let j = 0; j < numAggs; j++) b[j] = aggs[j]!.update(b[j]!, args[j]);
    };
    const add = (row: Row): void => {
      let t = 0;
      if (time !== undefined) {
        const v = time(row);
        if (v == null) return;
        t = v as number;
      }
      for (let i = 0; i < depth; i++) {
        const k = plain[i]!;
        const v = k.ev(row);
        values[k.i] = v;
        parts[i] = mapKeys[i]!(v);
      }
      for (let j = 0; j < numAggs; j++) {
        const input = inputs[j];
        args[j] = input == null ? null : input(row);
      }
      if (win === undefined) combine(0);
      else if (win.slideMs === win.sizeMs) combine(lastWindowStart(t, win.sizeMs, win.startMs));
      else for (const w of windowsOf(t, win.sizeMs, win.slideMs, win.startMs)) combine(w.start);
    };
    const timeOf = eventTimeOfKey(op, keyTypes);
    const finish = (): { entries: KeyEntry[]; late: number } => {
      const entries = partials.map((p) => ({ values: p.values, buffers: p.buffers, eventTimeMs: timeOf ? timeOf(p.values) : null }));
      // Late groups are dropped at the stateful operator, after partial aggregation (Spark's rule).
      return { entries, late: 0 };
    };
    return { add, finish };
  }

  return { keyTypes, collector };
}

// ---------------------------------------------------------------------------------------------
// Deduplication

type DedupOp = Exclude<StatefulOp, { kind: 'aggregate' }>;

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
        firsts.set(key, { values, record: (keyBytes, kg): DedupRecord => [kg, keyBytes, values, row, t] });
      };
      return { add, finish: () => ({ entries: [...firsts.values()], late }) };
    },
  };
}

// ---------------------------------------------------------------------------------------------

const compiledCache = new Map<string, MapSide>();

function compileMapSide(op: StatefulOp, schema: Schema, udfs: UdfRegistry): MapSide {
  const key = JSON.stringify([schema, op]);
  let side = compiledCache.get(key);
  if (side === undefined) {
    side = op.kind === 'aggregate' ? compileAggregate(op, schema, udfs) : compileDedup(op, schema);
    if (compiledCache.size > 256) compiledCache.clear();
    compiledCache.set(key, side);
  }
  return side;
}

/** The expressions a map side evaluates, for loading their udfs before streamPartials. */
export function mapSideExprs(op: StatefulOp): Expr[] {
  if (op.kind !== 'aggregate') return [];
  return [...op.keys, ...op.aggs.flatMap((a) => (a.arg === null ? [] : [a.arg]))];
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
  op: StatefulOp,
  schema: Schema,
  layout: StateLayoutMsg,
  udfs: UdfRegistry = new Map(),
  lateThresholdMs: number | null = null,
): { add(row: Row): void; finish(): PartitionedPartials } {
  const side = compileMapSide(op, schema, udfs);
  const collector = side.collector(lateThresholdMs);
  return {
    add: collector.add,
    finish() {
      const { entries, late } = collector.finish();
      const writer = new ShuffleWriter(layout, side.keyTypes);
      for (const e of entries) {
        if (e.buffers) writer.addAggregate(e.values, e.eventTimeMs ?? null, e.buffers);
        else writer.addDedup(e.values, e.record!);
      }
      return { blocks: writer.finish(), numRecords: entries.length, numLate: late };
    },
  };
}
