/**
 * Row groups skipped by statistics: the comparisons of a column with a literal that a filter pushes
 * down, and whether a row group's min, max and null count rule them out.
 */
import type { FileMetaData } from 'hyparquet';
import type { Expr } from '../../expressions/types.js';
import { conjuncts } from '../../expressions/joinBounds.js';
import type { DataType } from '../../schema/types.js';

/** A comparison of a column with a literal, which a row group's statistics can rule out. */
export interface ParquetPredicate {
  column: string;
  op: 'equalTo' | 'lt' | 'leq' | 'gt' | 'geq' | 'isNull' | 'isNotNull';
  value?: number | string | boolean;
}

const FLIPPED = { equalTo: 'equalTo', lt: 'gt', leq: 'geq', gt: 'lt', geq: 'leq' } as const;

/** The comparisons of column with literal among a filter's conjuncts (the rest it ignores: they only keep more row groups). */
export function parquetPredicates(cond: Expr): ParquetPredicate[] {
  const out: ParquetPredicate[] = [];
  for (const c of conjuncts(cond)) {
    if (c.op === 'unary' && (c.fn === 'isNull' || c.fn === 'isNotNull') && c.expr.op === 'col') out.push({ column: c.expr.name, op: c.fn });
    if (c.op !== 'binary' || !(c.fn in FLIPPED)) continue;
    const fn = c.fn as keyof typeof FLIPPED;
    const lit = (e: Expr): e is Extract<Expr, { op: 'lit' }> => e.op === 'lit' && e.value !== null;
    if (c.left.op === 'col' && lit(c.right)) out.push({ column: c.left.name, op: fn, value: c.right.value as number | string | boolean });
    else if (c.right.op === 'col' && lit(c.left)) out.push({ column: c.right.name, op: FLIPPED[fn], value: c.left.value as number | string | boolean });
  }
  return out;
}

/** Whether a row group may hold a row meeting every predicate, by its columns' statistics. */
export function mayMatch(metadata: FileMetaData, group: number, predicates: readonly ParquetPredicate[], types: ReadonlyMap<string, DataType>): boolean {
  const rowGroup = metadata.row_groups[group]!;
  const rows = Number(rowGroup.num_rows);
  for (const p of predicates) {
    const type = types.get(p.column);
    const chunk = rowGroup.columns.find((c) => c.meta_data?.path_in_schema.length === 1 && c.meta_data.path_in_schema[0] === p.column);
    const stats = chunk?.meta_data?.statistics;
    if (type === undefined || stats === undefined) continue;
    const nulls = stats.null_count === undefined ? undefined : Number(stats.null_count);
    if (p.op === 'isNull') {
      if (nulls === 0) return false;
      continue;
    }
    if (nulls === rows) return false; // every value is null: no comparison holds
    if (p.op === 'isNotNull') continue;
    // Strings only by exact bounds (a writer may truncate them); numbers by either form.
    const exact = type !== 'string' || (stats.is_min_value_exact === true && stats.is_max_value_exact === true);
    const bound = (v: unknown): number | string | boolean | undefined =>
      v === undefined || v === null ? undefined : typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.getTime() : (v as number | string | boolean);
    const min = bound(stats.min_value ?? (type === 'string' ? undefined : stats.min));
    const max = bound(stats.max_value ?? (type === 'string' ? undefined : stats.max));
    const x = p.value;
    if (!exact || min === undefined || max === undefined || typeof min !== typeof x || typeof max !== typeof x) continue;
    if (typeof x === 'number' && Number.isNaN(x)) continue;
    const out =
      (p.op === 'equalTo' && (x! < min || x! > max)) ||
      (p.op === 'lt' && min >= x!) ||
      (p.op === 'leq' && min > x!) ||
      (p.op === 'gt' && max <= x!) ||
      (p.op === 'geq' && max < x!);
    if (out) return false;
  }
  return true;
}
