/**
 * The map side of an aggregation (Spark's partial aggregation): the one implementation, over
 * column batches (rows that arrive as rows, after a join say, are batched first: mapSide.ts). A
 * row's key parts are numbers (a window's start, a number, a boolean, or the task-level id of a
 * string or struct value), looked up in an open-addressing table of Float64Array key tuples; the
 * aggregates then update typed-array accumulators by group id, one loop per aggregate
 * (accumulators.ts). Objects are made once per group, when the groups are written to the shuffle
 * blocks: keys of numbers, booleans and windows with fixed-size buffers are written straight into
 * the block (the fast path), any other group through ShuffleWriter.addAggregate; both give the
 * same bytes.
 *
 * Keys compare as the canonical encoding does (-0 = 0, NaN = NaN, null apart), and groups are
 * written in first-seen order, each seeing its values in row order. A sliding window key puts a
 * row in every window containing its time (the batch is expanded row by row, so the order holds);
 * a row whose window time is null belongs to no window and is dropped, as Spark's TimeWindowing
 * filter does.
 */
import { aggregatorOf, aggregateOutputSchema, eventTimeOfKey, windowOfKey, type Aggregator } from '../operators/aggregates.js';
import type { StatefulOp } from '../operators/types.js';
import type { Expr } from '../expressions/types.js';
import { exprType } from '../expressions/exprTypes.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import { lastWindowStart } from '../expressions/windows.js';
import { walkExpr } from '../expressions/exprTree.js';
import { resolveColumn } from '../expressions/resolveColumn.js';
import type { DataType, Schema } from '../schema/types.js';
import { isNumberBacked } from '../schema/values.js';
import type { ShuffleWriter } from '../shuffle/ShuffleWriter.js';
import { encodeKey, KeyWriter, murmur3_x86_32 } from '@sluice/state';
import { type Accumulator, accumulatorOf, isNull, vectorValue } from './accumulators.js';
import { compileColumnExpr, type ColumnEvaluator } from './columnExpr.js';
import { gather, type ColumnBatch, type Vector } from './vectors.js';

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

// ---- the group table ---------------------------------------------------------------------------

const scratch = new Float64Array(1);
const scratchBits = new Int32Array(scratch.buffer);

/** One key part per row: a number, or null; strings and other values as task-level ids. */
interface Part {
  values: Float64Array;
  nulls: Uint8Array | null;
}

/**
 * Interns the distinct values of one key column across the task's batches: strings by value, a
 * struct by its canonical encoding (two objects with equal fields are one key), keeping the
 * first one seen.
 */
class Interner {
  private readonly ids = new Map<unknown, number>();
  readonly values: unknown[] = [];
  constructor(private readonly identity?: (v: unknown) => unknown) {}
  id(v: unknown): number {
    const k = this.identity === undefined ? v : this.identity(v);
    let id = this.ids.get(k);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(v);
      this.ids.set(k, id);
    }
    return id;
  }
}

type KeyPart =
  | { kind: 'window'; ev: ColumnEvaluator; sizeMs: number; slideMs: number; startMs: number }
  | { kind: 'num' | 'bool'; ev: ColumnEvaluator }
  | { kind: 'interned'; ev: ColumnEvaluator; interner: () => Interner };

function keyPartOf(type: DataType, ev: ColumnEvaluator): KeyPart {
  if (isNumberBacked(type)) return { kind: 'num', ev };
  if (type === 'boolean') return { kind: 'bool', ev };
  const identity = typeof type === 'object' ? (v: unknown) => Buffer.from(encodeKey([v], [type])).toString('latin1') : undefined;
  return { kind: 'interned', ev, interner: () => new Interner(identity) };
}

/** A task's key part: an interned one with its own interner (ids are task-level). */
type TaskPart = Exclude<KeyPart, { kind: 'interned' }> | { kind: 'interned'; ev: ColumnEvaluator; interner: Interner };

/**
 * A batch with a sliding window key, expanded: row i once for each window that contains its time,
 * in row order then window order (a row whose time is null is in none), with those windows' starts.
 * Only the columns the aggregation reads (`used`; null: all) are carried over.
 */
function expandSliding(
  p: Extract<KeyPart, { kind: 'window' }>,
  batch: ColumnBatch,
  used: ReadonlySet<string> | null,
): { batch: ColumnBatch; starts: Float64Array } {
  const t = p.ev(batch);
  const { sizeMs, slideMs, startMs } = p;
  const most = batch.length * Math.ceil(sizeMs / slideMs);
  const rows = new Int32Array(most);
  const starts = new Float64Array(most);
  let m = 0;
  for (let i = 0; i < batch.length; i++) {
    if (isNull(t, i)) continue;
    const x = (t.kind === 'num' ? t.values[i] : vectorValue(t, i)) as number;
    // Starts in (x - size, last], as windowsOf gives them, in ascending order.
    const last = lastWindowStart(x, slideMs, startMs);
    let count = 0;
    while (last - count * slideMs > x - sizeMs) count++;
    for (let k = count - 1; k >= 0; k--) {
      rows[m] = i;
      starts[m++] = last - k * slideMs;
    }
  }
  const columns = new Map<string, Vector>();
  for (const [name, v] of batch.columns) if (used === null || used.has(name)) columns.set(name, gather(v, rows, m));
  return { batch: { length: m, columns }, starts: starts.subarray(0, m) };
}

/** The top-level columns of `schema` that `exprs` read; null when one cannot be told (then all are). */
function columnsRead(exprs: readonly Expr[], schema: Schema): Set<string> | null {
  const out = new Set<string>();
  let all = false;
  for (const e of exprs) {
    walkExpr(e, (x) => {
      if (x.op !== 'col') return;
      try {
        out.add(resolveColumn(x.name, schema).path[0] as string);
      } catch {
        all = true;
      }
    });
  }
  return all ? null : out;
}

/**
 * The part's values for one batch; `keep[i] = 0` marks rows that belong to no group. `starts`:
 * an expanded sliding-window batch's window starts.
 */
function partValues(p: TaskPart, batch: ColumnBatch, keep: Uint8Array, values: Float64Array, starts?: Float64Array): Part {
  const n = batch.length;
  if (p.kind === 'window' && starts !== undefined) {
    values.set(starts.subarray(0, n));
    return { values, nulls: null };
  }
  const v = p.ev(batch);
  if (p.kind === 'window') {
    // A row whose time is null is in no window (Spark's TimeWindowing filter).
    const t = v.kind === 'num' ? v.values : null;
    const { sizeMs, startMs } = p;
    let lastT = Number.NaN;
    let lastStart = 0;
    for (let i = 0; i < n; i++) {
      if (t === null || isNull(v, i)) {
        keep[i] = 0;
        continue;
      }
      const x = t[i]!;
      if (x !== lastT) {
        const r = (x - startMs) % sizeMs;
        lastStart = x - (r < 0 ? r + sizeMs : r);
        lastT = x;
      }
      values[i] = lastStart;
    }
    return { values, nulls: null };
  }
  if (p.kind === 'interned') {
    const interner = p.interner;
    let nulls: Uint8Array | null = null;
    if (v.kind === 'str') {
      const remap = new Float64Array(v.dict.length).fill(-1);
      for (let i = 0; i < n; i++) {
        if (v.nulls !== null && v.nulls[i] === 1) {
          nulls ??= new Uint8Array(n);
          nulls[i] = 1;
          continue;
        }
        const c = v.codes[i]!;
        let id = remap[c]!;
        if (id < 0) id = remap[c] = interner.id(v.dict[c]);
        values[i] = id;
      }
    } else {
      for (let i = 0; i < n; i++) {
        const x = vectorValue(v, i);
        if (x === null) {
          nulls ??= new Uint8Array(n);
          nulls[i] = 1;
        } else values[i] = interner.id(x);
      }
    }
    return { values, nulls };
  }
  if (v.kind !== 'num' && v.kind !== 'bool') {
    // Engine rows are typed, so a numeric or boolean column always builds a typed vector.
    throw new Error(`a ${p.kind} key column gave a ${v.kind} vector`);
  }
  if (v.kind === 'num') {
    // -0 joins 0, as in the canonical key encoding.
    for (let i = 0; i < n; i++) {
      const x = v.values[i]!;
      values[i] = x === 0 ? 0 : x;
    }
  } else for (let i = 0; i < n; i++) values[i] = v.values[i]!;
  return { values, nulls: v.nulls };
}

type AssignLoop = (table: GroupTable, parts: Part[], keep: Uint8Array, n: number, gids: Int32Array, scratch: Float64Array, bits: Int32Array) => void;
const assignLoops = new Map<number, AssignLoop>();

/**
 * The probing loop for keys of `width` parts, generated so that each part's arrays are locals and
 * the hash and the comparison are unrolled. A part hashes its null flag or the bits of its number
 * (NaN as one NaN; -0 was made 0 before); keys are equal when both are null, or both are the same
 * number, NaN included.
 */
function assignLoop(width: number): AssignLoop {
  let loop = assignLoops.get(width);
  if (loop !== undefined) return loop;
  const parts = Array.from({ length: width }, (_, p) => p);
  const src = `
    ${parts.map((p) => `const V${p} = parts[${p}].values, N${p} = parts[${p}].nulls;`).join('\n')}
    let slots = table.slots, mask = table.mask, keys = table.keys, nulls = table.nulls, hashes = table.hashes;
    for (let i = 0; i < n; i++) {
      if (keep[i] === 0) { gids[i] = -1; continue; }
      let h = 0x3c6ef372;
      ${parts
        .map(
          (p) => `
      const n${p} = N${p} !== null && N${p}[i] === 1 ? 1 : 0;
      const x${p} = V${p}[i];
      if (n${p} === 1) h = Math.imul(h ^ 0x7f4a7c15, 0x85ebca6b);
      else {
        scratch[0] = x${p} !== x${p} ? NaN : x${p};
        h = Math.imul(h ^ bits[0], 0xcc9e2d51);
        h = Math.imul(h ^ bits[1], 0x1b873593);
      }
      h ^= h >>> 15;`,
        )
        .join('')}
      let s = h & mask;
      for (;;) {
        const e = slots[s];
        if (e === 0) {
          gids[i] = table.insert(parts, i, h);
          slots = table.slots; mask = table.mask; keys = table.keys; nulls = table.nulls; hashes = table.hashes;
          break;
        }
        const g = e - 1;
        if (hashes[g] === h${parts
          .map(
            (p) =>
              ` && nulls[g * ${width} + ${p}] === n${p} && (n${p} === 1 || keys[g * ${width} + ${p}] === x${p} || (x${p} !== x${p} && keys[g * ${width} + ${p}] !== keys[g * ${width} + ${p}]))`,
          )
          .join('')}) {
          gids[i] = g;
          break;
        }
        s = (s + 1) & mask;
      }
    }`;
  loop = new Function('table', 'parts', 'keep', 'n', 'gids', 'scratch', 'bits', src) as AssignLoop;
  assignLoops.set(width, loop);
  return loop;
}

class GroupTable {
  size = 0;
  private capacity = 0;
  keys = new Float64Array(0);
  nulls = new Uint8Array(0);
  hashes = new Int32Array(0);
  slots = new Int32Array(0);
  mask = 0;

  constructor(
    private readonly width: number,
    /** Grown with the table: methods, not a closure made per task (docs/internals/operators.md). */
    private readonly growers: readonly Accumulator[],
  ) {
    this.resize(1024);
  }

  private resize(capacity: number): void {
    const w = this.width;
    const keys = new Float64Array(capacity * w);
    keys.set(this.keys);
    const nulls = new Uint8Array(capacity * w);
    nulls.set(this.nulls);
    const hashes = new Int32Array(capacity);
    hashes.set(this.hashes);
    this.keys = keys;
    this.nulls = nulls;
    this.hashes = hashes;
    this.capacity = capacity;
    // Load factor at most 1/2.
    const slots = new Int32Array(capacity * 2);
    this.mask = slots.length - 1;
    for (let g = 0; g < this.size; g++) {
      let s = hashes[g]! & this.mask;
      while (slots[s] !== 0) s = (s + 1) & this.mask;
      slots[s] = g + 1;
    }
    this.slots = slots;
    for (const a of this.growers) a.grow(capacity);
  }

  /** Sets gids[i] to row i's group, adding groups as they first appear. */
  assign(parts: Part[], keep: Uint8Array, n: number, gids: Int32Array): void {
    assignLoop(this.width)(this, parts, keep, n, gids, scratch, scratchBits);
  }

  insert(parts: Part[], i: number, h: number): number {
    if (this.size === this.capacity) this.resize(this.capacity * 2);
    const g = this.size++;
    const w = this.width;
    for (let p = 0; p < w; p++) {
      const part = parts[p]!;
      if (part.nulls !== null && part.nulls[i] === 1) this.nulls[g * w + p] = 1;
      else this.keys[g * w + p] = part.values[i]!;
    }
    this.hashes[g] = h;
    let s = h & this.mask;
    while (this.slots[s] !== 0) s = (s + 1) & this.mask;
    this.slots[s] = g + 1;
    return g;
  }
}

/** The engine value of a key part stored at `at`. */
function partValue(p: TaskPart, table: GroupTable, at: number): unknown {
  if (table.nulls[at] === 1) return null;
  const x = table.keys[at]!;
  if (p.kind === 'window') return { start: x, end: x + p.sizeMs };
  if (p.kind === 'bool') return x === 1;
  return p.kind === 'interned' ? p.interner.values[x] : x;
}

// ---- the aggregation ---------------------------------------------------------------------------

export interface ColumnAggregation {
  add(batch: ColumnBatch): void;
  /** Writes one partial per group (in first-seen order) and returns the number of groups. */
  finish(writer: ShuffleWriter): number;
}

/** The aggregate input of `arg`, with the implicit cast of text that sum and avg apply. */
function aggInput(arg: Expr, agg: Aggregator, schema: Schema): Expr {
  return exprType(arg, schema) === 'string' && agg.inputType === 'double' ? { op: 'cast', expr: arg, to: 'double' } : arg;
}

/** The map side of `op` over batches of `schema` (the rows entering the aggregation). Udfs must be loaded. */
export function columnAggregation(op: AggregateOp, schema: Schema, udfs: UdfRegistry): () => ColumnAggregation {
  aggregateOutputSchema(op, schema);
  const keyTypes = op.keys.map((k) => exprType(k, schema));
  const parts: KeyPart[] = op.keys.map((k, i) => {
    const win = windowOfKey(k);
    if (win === undefined) return keyPartOf(keyTypes[i]!, compileColumnExpr(k, schema, udfs));
    return { kind: 'window', ev: compileColumnExpr(win.expr, schema, udfs), sizeMs: win.sizeMs, slideMs: win.slideMs, startMs: win.startMs };
  });
  // At most one window (aggregateOutputSchema); a sliding one expands each batch.
  const sliding = parts.find((p): p is Extract<KeyPart, { kind: 'window' }> => p.kind === 'window' && p.slideMs !== p.sizeMs);
  const aggs = op.aggs.map((s) => aggregatorOf(s, schema));
  const inputs = op.aggs.map((s, j) => (s.arg === null ? null : compileColumnExpr(aggInput(s.arg, aggs[j]!, schema), schema, udfs)));
  const timeOf = eventTimeOfKey(op, keyTypes);
  const read = sliding === undefined ? null : columnsRead([...op.keys, ...op.aggs.flatMap((s) => (s.arg === null ? [] : [s.arg]))], schema);
  /** The key part that carries the event time (eventTimeOfKey: a window's end, or the value). */
  const eventPart = op.eventTimeKey ?? -1;
  /** The key parts that choose the key group (op.routeKeys); -1: all of them. */
  const route = op.routeKeys ?? -1;
  const key = new KeyWriter();

  return () => {
    // Interners hold task-level ids: fresh ones per task.
    const taskParts: TaskPart[] = parts.map((p) => (p.kind === 'interned' ? { ...p, interner: p.interner() } : p));
    const accs = op.aggs.map((s, j) => accumulatorOf(aggs[j]!, s.fn));
    const table = new GroupTable(taskParts.length, accs);
    let scratchRows = 0;
    let keepAll = new Uint8Array(0);
    let gidsAll = new Int32Array(0);
    let partsAll: Float64Array[] = [];
    return {
      add(input) {
        const expanded = sliding && input.length > 0 ? expandSliding(sliding, input, read) : undefined;
        const batch = expanded?.batch ?? input;
        const n = batch.length;
        if (n === 0) return;
        // Scratch arrays of the task, reused by every batch.
        if (scratchRows < n) {
          scratchRows = n;
          keepAll = new Uint8Array(n);
          gidsAll = new Int32Array(n);
          partsAll = taskParts.map(() => new Float64Array(n));
        }
        const keep = keepAll.subarray(0, n).fill(1);
        const gids = gidsAll.subarray(0, n);
        const values = taskParts.map((p, k) => partValues(p, batch, keep, partsAll[k]!.subarray(0, n), expanded?.starts));
        table.assign(values, keep, n, gids);
        accs.forEach((a, j) => {
          a.update(gids, n, inputs[j] === null ? null : inputs[j]!(batch));
        });
      },
      finish(writer) {
        const w = taskParts.length;
        const maxBytes = accs.reduce((n, a) => n + a.maxBytes, 0);
        const encodable = Number.isFinite(maxBytes) && taskParts.every((p) => p.kind !== 'interned');
        for (let g = 0; g < table.size; g++) {
          if (!encodable) {
            const keyValues = taskParts.map((p, k) => partValue(p, table, g * w + k));
            writer.addAggregate(
              keyValues,
              timeOf ? timeOf(keyValues) : null,
              accs.map((a) => a.buffer(g)),
            );
            continue;
          }
          // Numbers, booleans and windows: the key and buffers go straight into the block.
          key.reset();
          let time: number | null = null;
          let routed = -1;
          for (let k = 0; k < w; k++) {
            if (k === route) routed = key.pos;
            const p = taskParts[k]!;
            const at = g * w + k;
            if (table.nulls[at] === 1) {
              key.null();
              continue;
            }
            const x = table.keys[at]!;
            if (p.kind === 'window') {
              key.struct();
              key.number(x);
              key.number(x + p.sizeMs);
            } else if (p.kind === 'bool') key.value(x === 1, 'boolean');
            else key.number(x);
            if (k === eventPart) time = p.kind === 'window' ? x + p.sizeMs : x;
          }
          const kg = murmur3_x86_32(key.buf, 0, routed < 0 ? key.pos : routed) % writer.keyGroups;
          const block = writer.aggregateBlockOf(kg);
          let pos = block.beginRecord(kg, key.buf, key.pos, time, maxBytes);
          for (const a of accs) pos = a.write(g, block.bytes, block.dataView, pos);
          block.endRecord(pos);
        }
        return table.size;
      },
    };
  };
}
