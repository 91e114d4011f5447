/**
 * The walks over expressions that a SELECT's planning takes (sqlStatement.ts): a node replaced
 * wherever it occurs, grouping keys referred to by their output columns, the columns an
 * expression reads, and whether a name resolves in a schema.
 */
import { exprType, type Expr, type Schema } from '@sluice/executor';

/** `e` with each node that `f` replaces replaced (Expr is plain data: one walk covers every form). */
export function rewrite(e: Expr, f: (node: Expr) => Expr | undefined): Expr {
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (x === null || typeof x !== 'object') return x;
    const replaced = 'op' in x ? f(x as Expr) : undefined;
    if (replaced !== undefined) return replaced;
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, walk(v)]));
  };
  return walk(e) as Expr;
}

/** Sub-expressions equal to one of `keys` become references to that key's output column. */
export function keyRefs(e: Expr, keys: Array<{ expr: Expr; name: string }>): Expr {
  return rewrite(e, (node) => {
    const hit = keys.find((k) => JSON.stringify(k.expr) === JSON.stringify(node));
    return hit && { op: 'col', name: hit.name };
  });
}

/** The columns `e` reads, lambda parameters aside. */
export function freeColumns(e: Expr): string[] {
  const out: string[] = [];
  const walk = (x: unknown, bound: ReadonlySet<string>): void => {
    if (Array.isArray(x)) {
      for (const y of x) walk(y, bound);
      return;
    }
    if (x === null || typeof x !== 'object') return;
    const node = x as Expr;
    if (node.op === 'col') {
      if (!bound.has(node.name.split('.')[0]!.toLowerCase())) out.push(node.name);
      return;
    }
    if (node.op === 'lambda') {
      walk(node.body, new Set([...bound, ...node.params.map((p) => p.toLowerCase())]));
      return;
    }
    for (const v of Object.values(x)) walk(v, bound);
  };
  walk(e, new Set());
  return out;
}

/** Whether `name` (a column, or a field path into one) resolves in `schema`. */
export function resolves(name: string, schema: Schema): boolean {
  try {
    exprType({ op: 'col', name }, schema);
    return true;
  } catch {
    return false;
  }
}
