/**
 * The comparisons of a column with a literal that a filter pushes down to a Parquet read; the
 * reader skips row groups whose statistics rule them out (statistics.ts). Free of hyparquet's
 * types, so that the package's public declarations never name them.
 */
import { conjuncts } from '../../expressions/joinBounds.js';
import type { Expr } from '../../expressions/types.js';

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
