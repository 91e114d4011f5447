/** Walking the expression tree: the one place that knows which variants have sub-expressions. */
import type { Expr } from './types.js';

export function childrenOf(expr: Expr): Expr[] {
  switch (expr.op) {
    case 'col':
    case 'lit':
      return [];
    case 'alias':
    case 'unary':
    case 'cast':
    case 'window':
      return [expr.expr];
    case 'binary':
      return [expr.left, expr.right];
    case 'when':
      return [...expr.branches.flatMap((b) => [b.cond, b.value]), ...(expr.otherwise ? [expr.otherwise] : [])];
    case 'call':
    case 'udf':
      return expr.args;
    case 'lambda':
      return [expr.body];
  }
}

/** Calls `visit` on `expr` and every sub-expression, parents first. */
export function walkExpr(expr: Expr, visit: (e: Expr) => void): void {
  visit(expr);
  for (const child of childrenOf(expr)) walkExpr(child, visit);
}
