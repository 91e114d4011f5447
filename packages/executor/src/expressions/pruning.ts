/**
 * Column pruning: the input columns an operator chain can read. A JSON reader given only those
 * columns skips converting the others (timestamps are the costly ones), as Spark's file scans do.
 */
import { walkExpr } from './exprTree.js';
import type { Expr } from './types.js';
import type { Op } from '../operators/types.js';
import type { Schema } from '../schema/types.js';

function collect(expr: Expr, into: Set<string>): void {
  walkExpr(expr, (e) => {
    if (e.op === 'col') into.add(e.name);
  });
}

/**
 * The fields of `schema` that `ops` read, in schema order; the whole schema when the chain has no
 * projection (every input column reaches the output). Up to the first projection, filters and
 * watermarks read input columns; after it, operators only see the projection's outputs.
 */
export function requiredInputSchema(ops: Op[], schema: Schema): Schema {
  const refs = new Set<string>();
  let projected = false;
  for (const op of ops) {
    if (op.kind === 'filter') collect(op.cond, refs);
    else if (op.kind === 'watermark') refs.add(op.column);
    else if (op.kind === 'join') {
      for (const k of op.keys) refs.add(k);
      if (op.residual) collect(op.residual, refs);
    } else if (op.kind === 'generate') collect(op.expr, refs);
    else {
      for (const e of op.exprs) collect(e, refs);
      projected = true;
      break;
    }
  }
  if (!projected) return schema;
  // Names resolve case-insensitively, and `a.b` reads struct column `a`.
  const wanted = new Set([...refs].map((r) => r.split('.')[0]?.toLowerCase()));
  return schema.filter((f) => wanted.has(f.name.toLowerCase()));
}
