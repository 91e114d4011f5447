/**
 * Column vectors: how a batch of rows travels through the map side without one object per row.
 *
 *   num    INT, BIGINT, DOUBLE and TIMESTAMP (epoch ms) values in a Float64Array
 *   bool   BOOLEAN as 0/1 in a Uint8Array
 *   str    STRING, dictionary-encoded: `codes[i]` indexes `dict` (a chunk's distinct strings)
 *   any    everything else (structs, VOID) as engine-form values, null for SQL null
 *
 * The first three carry a null mask (`nulls[i] === 1` is SQL null), or null when no value is null;
 * a null slot's value is unspecified. Vectors are never modified after they are built, so a
 * projection that passes a column through shares it.
 */
import { CompileCache } from '../compileCache.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { isNumberBacked } from '../schema/values.js';

export type Vector =
  | { kind: 'num'; length: number; values: Float64Array; nulls: Uint8Array | null }
  | { kind: 'bool'; length: number; values: Uint8Array; nulls: Uint8Array | null }
  | { kind: 'str'; length: number; dict: string[]; codes: Int32Array; nulls: Uint8Array | null }
  | { kind: 'any'; length: number; values: unknown[] };

/** A chunk of rows as columns, keyed by top-level field name. */
export interface ColumnBatch {
  length: number;
  columns: Map<string, Vector>;
}

export function isNumVectorType(t: DataType): boolean {
  return isNumberBacked(t);
}

/** Whether a value is SQL null. */
export function isNullAt(v: Vector, i: number): boolean {
  return v.kind === 'any' ? v.values[i] == null : v.nulls !== null && v.nulls[i] === 1;
}

/** The engine-form value at `i` (null for SQL null). */
export function valueAt(v: Vector, i: number): unknown {
  switch (v.kind) {
    case 'num':
      return v.nulls !== null && v.nulls[i] === 1 ? null : v.values[i];
    case 'bool':
      return v.nulls !== null && v.nulls[i] === 1 ? null : v.values[i] === 1;
    case 'str':
      return v.nulls !== null && v.nulls[i] === 1 ? null : v.dict[v.codes[i]!];
    case 'any':
      return v.values[i] ?? null;
  }
}

/** Builds one vector of `type` from values appended in order. */
export class VectorBuilder {
  private n = 0;
  private nums: Float64Array | null = null;
  private bools: Uint8Array | null = null;
  private codes: Int32Array | null = null;
  private nulls: Uint8Array | null = null;
  private dict: string[] = [];
  private codeOf: Map<string, number> | null = null;
  private anys: unknown[] | null = null;

  constructor(
    type: DataType,
    private readonly capacity: number,
  ) {
    if (isNumVectorType(type)) this.nums = new Float64Array(capacity);
    else if (type === 'boolean') this.bools = new Uint8Array(capacity);
    else if (type === 'string') {
      this.codes = new Int32Array(capacity);
      this.codeOf = new Map();
    } else this.anys = new Array(capacity);
  }

  private setNull(i: number): void {
    this.nulls ??= new Uint8Array(this.capacity);
    this.nulls[i] = 1;
  }

  /** Appends an engine-form value; a value that does not fit the type keeps the whole vector generic. */
  push(v: unknown): void {
    const i = this.n++;
    if (this.anys !== null) {
      this.anys[i] = v ?? null;
      return;
    }
    if (v == null) {
      this.setNull(i);
      return;
    }
    if (this.nums !== null && typeof v === 'number') this.nums[i] = v;
    else if (this.bools !== null && typeof v === 'boolean') this.bools[i] = v ? 1 : 0;
    else if (this.codes !== null && typeof v === 'string') {
      let c = this.codeOf!.get(v);
      if (c === undefined) {
        c = this.dict.length;
        this.dict.push(v);
        this.codeOf!.set(v, c);
      }
      this.codes[i] = c;
    } else {
      this.degrade();
      this.anys![i] = v;
    }
  }

  /** Appends a number with no boxing (a reader's typed fast path); other vectors take push. */
  pushNumber(x: number): void {
    if (this.nums !== null) this.nums[this.n++] = x;
    else this.push(x);
  }

  /** Engine rows are typed, so this is a safety net: the values so far move to an `any` vector. */
  private degrade(): void {
    const done = this.build(this.n - 1);
    const anys: unknown[] = new Array(this.capacity);
    for (let i = 0; i < done.length; i++) anys[i] = valueAt(done, i);
    this.anys = anys;
    this.nums = this.bools = this.codes = this.nulls = null;
  }

  build(length = this.n): Vector {
    if (this.nums !== null)
      return { kind: 'num', length, values: this.nums.subarray(0, length), nulls: this.nulls === null ? null : this.nulls.subarray(0, length) };
    if (this.bools !== null)
      return { kind: 'bool', length, values: this.bools.subarray(0, length), nulls: this.nulls === null ? null : this.nulls.subarray(0, length) };
    if (this.codes !== null) {
      return {
        kind: 'str',
        length,
        dict: this.dict,
        codes: this.codes.subarray(0, length),
        nulls: this.nulls === null ? null : this.nulls.subarray(0, length),
      };
    }
    const anys = this.anys!;
    if (anys.length !== length) anys.length = length;
    return { kind: 'any', length, values: anys };
  }
}

/** Rows [start, end) of `rows` as a batch of `schema`'s top-level fields. */
export function batchFromRows(rows: readonly Row[], schema: Schema, start = 0, end = rows.length): ColumnBatch {
  const length = end - start;
  const columns = new Map<string, Vector>();
  for (const f of schema) {
    const b = new VectorBuilder(f.type, length);
    for (let i = start; i < end; i++) b.push(rows[i]![f.name]);
    columns.set(f.name, b.build());
  }
  return { length, columns };
}

/** Keeps the rows at `idx[0..count)` (ascending), sharing dictionaries. */
export function gather(v: Vector, idx: Int32Array, count: number): Vector {
  const pickNulls = (nulls: Uint8Array | null): Uint8Array | null => {
    if (nulls === null) return null;
    const out = new Uint8Array(count);
    for (let k = 0; k < count; k++) out[k] = nulls[idx[k]!]!;
    return out;
  };
  switch (v.kind) {
    case 'num': {
      const out = new Float64Array(count);
      for (let k = 0; k < count; k++) out[k] = v.values[idx[k]!]!;
      return { kind: 'num', length: count, values: out, nulls: pickNulls(v.nulls) };
    }
    case 'bool': {
      const out = new Uint8Array(count);
      for (let k = 0; k < count; k++) out[k] = v.values[idx[k]!]!;
      return { kind: 'bool', length: count, values: out, nulls: pickNulls(v.nulls) };
    }
    case 'str': {
      const out = new Int32Array(count);
      for (let k = 0; k < count; k++) out[k] = v.codes[idx[k]!]!;
      return { kind: 'str', length: count, dict: v.dict, codes: out, nulls: pickNulls(v.nulls) };
    }
    case 'any': {
      const out: unknown[] = new Array(count);
      for (let k = 0; k < count; k++) out[k] = v.values[idx[k]!];
      return { kind: 'any', length: count, values: out };
    }
  }
}

/**
 * Rows out of a batch, for the places where a user sees rows (and the row-only operators). One
 * object literal per row, so the rows share a hidden class; names go through JSON.stringify.
 */
export function rowsFromBatch(batch: ColumnBatch, schema: Schema): Row[] {
  return rowsFromVectors(
    schema.map((f) => batch.columns.get(f.name)!),
    schema,
    batch.length,
  );
}

/** The same, from `schema`'s vectors in its order. */
export function rowsFromVectors(vectors: readonly Vector[], schema: Schema, length: number): Row[] {
  const rowAt = rowAtOf(schema);
  const rows: Row[] = new Array(length);
  for (let i = 0; i < length; i++) rows[i] = rowAt(vectors, i);
  return rows;
}

type RowAt = (vectors: readonly Vector[], i: number) => Row;
const rowAts = new CompileCache<RowAt>();

/**
 * The generated constructor of one row of `schema` out of its vectors (in its order), compiled
 * once per worker: one object literal per row, so the rows share a hidden class; names go through
 * JSON.stringify. It takes the vectors as an argument, so no closure is made per batch.
 */
export function rowAtOf(schema: Schema): RowAt {
  return rowAts.of(JSON.stringify(schema.map((f) => f.name)), () => {
    const props = schema.map((f, i) => `${f.name === '__proto__' ? `[${JSON.stringify(f.name)}]` : JSON.stringify(f.name)}: at(v[${i}], i)`);
    return new Function('at', `return function rowAt(v, i) { return { ${props.join(', ')} }; };`)(valueAt) as RowAt;
  });
}
