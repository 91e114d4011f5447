/**
 * A join side's stored rows in a shard's worker, as columns: no object per row. Row numbers index
 * every array; a number column is a Float64Array with a null mask, a boolean one a Uint8Array
 * with a null mask, any other (strings, structs) one array slot a row. Beside the values, each row
 * has its matched flag, its expiry (the watermark at or past which it goes; NaN: never) and the
 * next row of its key (-1: the last), so a key's rows are a chain (join/table.ts). Freed rows are
 * reused before the arrays grow.
 */
import type { Row, Schema } from '../../schema/types.js';
import { isNumberBacked } from '../../schema/values.js';
import { valueAt, type Vector } from '../../columns/vectors.js';

type Column =
  | { kind: 'num'; values: Float64Array; nulls: Uint8Array }
  | { kind: 'bool'; values: Uint8Array; nulls: Uint8Array }
  | { kind: 'obj'; values: unknown[] };

export class RowArena {
  readonly names: string[];
  columns: Column[];
  matched: Uint8Array;
  expiry: Float64Array;
  next: Int32Array;
  /** Rows in use. */
  size = 0;
  /** Rows allocated (a row number is below it), freed ones included. */
  private top = 0;
  private free = -1;

  constructor(readonly schema: Schema) {
    this.names = schema.map((f) => f.name);
    const capacity = 1024;
    this.columns = schema.map((f): Column => {
      if (isNumberBacked(f.type)) return { kind: 'num', values: new Float64Array(capacity), nulls: new Uint8Array(capacity) };
      if (f.type === 'boolean') return { kind: 'bool', values: new Uint8Array(capacity), nulls: new Uint8Array(capacity) };
      return { kind: 'obj', values: [] };
    });
    this.matched = new Uint8Array(capacity);
    this.expiry = new Float64Array(capacity);
    this.next = new Int32Array(capacity);
  }

  /** A row number for a new row (its values to be set), not matched, never expiring, last of its chain. */
  alloc(): number {
    let r = this.free;
    if (r >= 0) this.free = this.next[r]!;
    else {
      if (this.top === this.matched.length) this.grow(this.top * 2);
      r = this.top++;
    }
    this.matched[r] = 0;
    this.expiry[r] = Number.NaN;
    this.next[r] = -1;
    this.size += 1;
    return r;
  }

  release(r: number): void {
    for (const c of this.columns) if (c.kind === 'obj') c.values[r] = undefined;
    this.next[r] = this.free;
    this.free = r;
    this.size -= 1;
  }

  /** Sets row r's values from row i of the side's vectors (in its schema's order). */
  setFromVectors(r: number, vectors: readonly Vector[], i: number): void {
    const columns = this.columns;
    for (let k = 0; k < columns.length; k++) {
      const v = vectors[k]!;
      const c = columns[k]!;
      if (c.kind === 'num' && v.kind === 'num') {
        c.values[r] = v.values[i]!;
        c.nulls[r] = v.nulls === null ? 0 : v.nulls[i]!;
      } else if (c.kind === 'obj' && v.kind === 'str') c.values[r] = v.nulls !== null && v.nulls[i] === 1 ? null : v.dict[v.codes[i]!];
      else this.set(k, r, valueAt(v, i));
    }
  }

  /** Sets row r's values from a row of the side's schema. */
  setFromRow(r: number, row: Row): void {
    for (let k = 0; k < this.names.length; k++) this.set(k, r, row[this.names[k]!]);
  }

  /** Column k of row r (engine form; null for SQL null). */
  value(k: number, r: number): unknown {
    const c = this.columns[k]!;
    switch (c.kind) {
      case 'num':
        return c.nulls[r] === 1 ? null : c.values[r];
      case 'bool':
        return c.nulls[r] === 1 ? null : c.values[r] === 1;
      case 'obj':
        return c.values[r] ?? null;
    }
  }

  /** Row r as an object (for the rows a join emits). */
  row(r: number): Row {
    const out: Row = {};
    for (let k = 0; k < this.names.length; k++) out[this.names[k]!] = this.value(k, r);
    return out;
  }

  /** Sets a value; one that does not fit a typed column (engine rows are typed: a safety net) makes the column hold any value. */
  private set(k: number, r: number, v: unknown): void {
    const c = this.columns[k]!;
    if (c.kind === 'obj') {
      c.values[r] = v ?? null;
      return;
    }
    if (v === null || v === undefined) {
      c.nulls[r] = 1;
      return;
    }
    if (c.kind === 'num' && typeof v === 'number') {
      c.values[r] = v;
      c.nulls[r] = 0;
    } else if (c.kind === 'bool' && typeof v === 'boolean') {
      c.values[r] = v ? 1 : 0;
      c.nulls[r] = 0;
    } else {
      const values: unknown[] = new Array(this.top);
      for (let i = 0; i < this.top; i++) values[i] = this.value(k, i);
      values[r] = v;
      this.columns[k] = { kind: 'obj', values };
    }
  }

  private grow(capacity: number): void {
    const widen = <T extends Float64Array | Uint8Array | Int32Array>(a: T): T => {
      const next = new (a.constructor as new (n: number) => T)(capacity);
      next.set(a);
      return next;
    };
    this.matched = widen(this.matched);
    this.expiry = widen(this.expiry);
    this.next = widen(this.next);
    this.columns = this.columns.map(
      (c): Column =>
        c.kind === 'obj'
          ? c
          : c.kind === 'num'
            ? { kind: 'num', values: widen(c.values), nulls: widen(c.nulls) }
            : { kind: 'bool', values: widen(c.values), nulls: widen(c.nulls) },
    );
  }
}
