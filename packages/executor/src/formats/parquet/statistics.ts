/**
 * Row groups skipped by statistics: whether a row group's min, max and null count rule out the
 * comparisons a filter pushes down (predicates.ts).
 */
import type { FileMetaData } from 'hyparquet';
import type { DataType } from '../../schema/types.js';
import type { ParquetPredicate } from './predicates.js';

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
