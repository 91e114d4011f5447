/**
 * The analysis of a join's condition, as Spark's optimizer and planner do it: the join type by
 * Spark's names, the equalities of a left and a right column that are the keys (null-safe ones
 * for two streams), the residual condition, and the equalities of expressions that become hidden
 * key columns of each side.
 */
import type { Expr, JoinType, Schema } from '@sluice/executor';
import { didYouMean, SluiceError, suggest } from '@sluice/state';
import { andAll, exprColumns } from './StreamJoinPlanner.js';

const JOIN_TYPES: Record<string, JoinType> = {
  inner: 'inner',
  left: 'left_outer',
  leftouter: 'left_outer',
  semi: 'left_semi',
  leftsemi: 'left_semi',
  anti: 'left_anti',
  leftanti: 'left_anti',
};

/** Spark's join type names, in any case, with or without underscores. */
export function joinType(how: string): JoinType {
  const t = JOIN_TYPES[String(how).toLowerCase().replaceAll('_', '')];
  if (t === undefined) {
    throw new SluiceError('UNSUPPORTED_OPERATION', `join type ${how}: a stream joins a static side as inner, left_outer, left_semi or left_anti`, {
      option: 'how',
    });
  }
  return t;
}

/**
 * A join condition as Spark plans it: the equalities of a left column and a right column among its
 * `and`-ed parts are the keys (for two streams also a null-safe `<=>` one, under which null matches
 * null); the other parts (any boolean expression over both sides) are the residual, checked on each
 * pair of rows with equal keys. A condition without such an equality would join every pair (a
 * cross join): refused, as is a name on both sides (there is no way to say which side it means).
 */
export function equiJoinKeys(
  cond: Expr,
  left: Schema,
  right: Schema,
  streams: boolean,
): { keys: string[]; rightKeys: string[]; nullSafe?: boolean[]; residual?: Expr } {
  const inLeft = (name: string): boolean => left.some((f) => f.name === name);
  const inRight = (name: string): boolean => right.some((f) => f.name === name);
  for (const name of new Set(exprColumns(cond))) {
    if (inLeft(name) && inRight(name)) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        `column ${name} is on both sides of the join: join on its name (on = '${name}'), or rename one side's first`,
        { column: name },
      );
    }
    if (!inLeft(name) && !inRight(name)) {
      const suggestions = suggest(
        name,
        [...left, ...right].map((f) => f.name),
      );
      throw new SluiceError('UNRESOLVED_COLUMN', `join condition: no column ${name} on either side.${didYouMean(suggestions)}`, { column: name, suggestions });
    }
  }
  const keys: string[] = [];
  const rightKeys: string[] = [];
  const nullSafe: boolean[] = [];
  const rest: Expr[] = [];
  /** The pair [left column, right column] of two operands that are columns of different sides. */
  const pairOf = (a: Expr, b: Expr): [string, string] | undefined => {
    if (a.op !== 'col' || b.op !== 'col' || inLeft(a.name) === inLeft(b.name)) return undefined;
    return inLeft(a.name) ? [a.name, b.name] : [b.name, a.name];
  };
  const visit = (expr: Expr): void => {
    let e = expr;
    while (e.op === 'alias') e = e.expr; // expr('a <=> b') names its result
    if (e.op === 'binary' && e.fn === 'and') {
      visit(e.left);
      visit(e.right);
      return;
    }
    const safe = streams ? nullSafeOperands(e) : undefined;
    const pair = e.op === 'binary' && e.fn === 'equalTo' ? pairOf(e.left, e.right) : safe && pairOf(...safe);
    if (pair === undefined) {
      rest.push(e);
      return;
    }
    keys.push(pair[0]);
    rightKeys.push(pair[1]);
    nullSafe.push(safe !== undefined);
  };
  visit(cond);
  if (keys.length === 0) {
    throw streams
      ? new SluiceError('UNSUPPORTED_OPERATION', 'Stream-stream join without equality predicate is not supported', { option: 'on' })
      : new SluiceError('UNSUPPORTED_OPERATION', 'a join condition needs an equality of a stream column and a static column (without one it is a cross join)', {
          option: 'on',
        });
  }
  const residual = andAll(rest);
  return { keys, rightKeys, ...(nullSafe.some((x) => x) && { nullSafe }), ...(residual !== undefined && { residual }) };
}

/** The hidden key columns each side of a join gets (name, expression), and the condition over them. */
export interface ExpressionKeys {
  left: Array<[string, Expr]>;
  right: Array<[string, Expr]>;
  cond: Expr;
  hidden: string[];
}

/**
 * A condition's equalities of an expression of one side's columns and one of the other's
 * (`mod(auction, 10000) = key`), as Spark's optimizer plans them: each expression becomes a
 * column of its side (`__join_key_<i>_l`, `__join_key_<i>_r`), their equality a key, and the join
 * drops them again. Undefined when every equality is of plain columns already.
 */
export function expressionKeys(left: Schema, right: Schema, cond: Expr): ExpressionKeys | undefined {
  const sideOf = (e: Expr): 'l' | 'r' | undefined => {
    const names = exprColumns(e);
    if (names.length === 0) return undefined;
    if (names.every((n) => left.some((f) => f.name === n))) return 'l';
    if (names.every((n) => right.some((f) => f.name === n))) return 'r';
    return undefined;
  };
  const hidden: string[] = [];
  const l: Array<[string, Expr]> = [];
  const r: Array<[string, Expr]> = [];
  const rewrite = (expr: Expr): Expr => {
    let e = expr;
    while (e.op === 'alias') e = e.expr;
    if (e.op === 'binary' && e.fn === 'and') return { ...e, left: rewrite(e.left), right: rewrite(e.right) };
    if (e.op !== 'binary' || e.fn !== 'equalTo' || (e.left.op === 'col' && e.right.op === 'col')) return e;
    const [a, b] = [sideOf(e.left), sideOf(e.right)];
    if (a === undefined || b === undefined || a === b) return e;
    const [onLeft, onRight] = a === 'l' ? [e.left, e.right] : [e.right, e.left];
    const i = hidden.length / 2;
    const [ln, rn] = [`__join_key_${i}_l`, `__join_key_${i}_r`];
    hidden.push(ln, rn);
    l.push([ln, onLeft]);
    r.push([rn, onRight]);
    return { ...e, left: { op: 'col', name: ln }, right: { op: 'col', name: rn } };
  };
  const rewritten = rewrite(cond);
  return hidden.length === 0 ? undefined : { left: l, right: r, cond: rewritten, hidden };
}

/** The operands of `a <=> b` (Column.eqNullSafe and the SQL operator build the same CASE WHEN), if `e` is one. */
function nullSafeOperands(e: Expr): [Expr, Expr] | undefined {
  if (e.op !== 'when' || e.branches.length !== 2 || e.otherwise?.op !== 'binary' || e.otherwise.fn !== 'equalTo') return undefined;
  const [a, b] = [e.otherwise.left, e.otherwise.right];
  const isNullOf = (x: Expr, of: Expr): boolean => x.op === 'unary' && x.fn === 'isNull' && JSON.stringify(x.expr) === JSON.stringify(of);
  const [first, second] = e.branches as [{ cond: Expr; value: Expr }, { cond: Expr; value: Expr }];
  const falseLit = second.value.op === 'lit' && second.value.value === false;
  return isNullOf(first.cond, a) && isNullOf(first.value, b) && isNullOf(second.cond, b) && falseLit ? [a, b] : undefined;
}
