/**
 * The state watermark a stream-stream join's condition gives one side, as Spark's
 * StreamingJoinHelper.getStateValueWatermark computes it: the condition's conjuncts of the form
 * `leftTime + c1 < rightTime + c2` (or <=, >, >=) are solved for the side's time column with the
 * other side's watermarked column at its watermark, and the least solution is the value below
 * which (inclusive) that side's state rows can never match again.
 *
 * Terms are added up in milliseconds: a TIMESTAMP column or literal as epoch ms (a cast of one to
 * a number too: CAST(ts AS LONG) > CAST(other AS LONG) + 1 compares them in seconds, so a plain
 * number is seconds), an INTERVAL by its days and time (months have no fixed length: no bound).
 * Anything else in a comparison (a function, a column of neither kind) gives that conjunct no bound.
 */
import type { Expr } from './types.js';
import { parseInterval } from '../schema/intervals.js';
import { MS_PER_DAY } from '../schema/timestamps.js';
import { isNumericType } from '../schema/values.js';

/** The columns of the side to bound, the other side's watermarked columns, and that side's watermark. */
export interface JoinBoundSides {
  /** Columns of the side whose state watermark is wanted (lower case). */
  side: ReadonlySet<string>;
  /** Columns of the other side that carry its watermark (lower case). */
  watermarked: ReadonlySet<string>;
}

/** Column names in lower case, as JoinBoundSides holds them. */
export function lowerCaseNames(names: Iterable<string>): Set<string> {
  return new Set([...names].map((n) => n.toLowerCase()));
}

type Term = { col: string; negated: boolean } | { ms: number; negated: boolean };

/** The conjuncts of an AND chain. */
export function conjuncts(e: Expr): Expr[] {
  return e.op === 'binary' && e.fn === 'and' ? [...conjuncts(e.left), ...conjuncts(e.right)] : [e];
}

/** The terms of `e` as a sum (each a column or a constant in ms, maybe negated), or undefined if it is not one. */
function collectTerms(e: Expr, negated: boolean, out: Term[]): boolean {
  switch (e.op) {
    case 'binary':
      if (e.fn === 'plus') return collectTerms(e.left, negated, out) && collectTerms(e.right, negated, out);
      if (e.fn === 'minus') return collectTerms(e.left, negated, out) && collectTerms(e.right, !negated, out);
      return false;
    case 'unary':
      return e.fn === 'negate' && collectTerms(e.expr, !negated, out);
    case 'cast':
      return (isNumericType(e.to) || e.to === 'timestamp') && collectTerms(e.expr, negated, out);
    case 'alias':
      return collectTerms(e.expr, negated, out);
    case 'col':
      out.push({ col: e.name.toLowerCase(), negated });
      return true;
    case 'lit': {
      if (e.type === 'interval') {
        const iv = parseInterval(String(e.value));
        if (iv === null || iv[0] !== 0) return false;
        out.push({ ms: iv[1] * MS_PER_DAY + iv[2], negated });
        return true;
      }
      if (e.type === 'timestamp' && typeof e.value === 'number') {
        out.push({ ms: e.value, negated });
        return true;
      }
      if (typeof e.value === 'number' && isNumericType(e.type)) {
        out.push({ ms: e.value * 1000, negated });
        return true;
      }
      return false;
    }
    default:
      return false;
  }
}

/**
 * `less < more` solved for the side's column: with the terms of less - more < 0 and the side's
 * column among them negated (-sideTime + rest < 0), the bound is rest with the watermark put in.
 */
function solveLessThan(less: Expr, more: Expr, sides: JoinBoundSides, watermarkMs: number): number | undefined {
  const terms: Term[] = [];
  if (!collectTerms(less, false, terms) || !collectTerms(more, true, terms)) return undefined;
  const cols = terms.filter((t): t is Extract<Term, { col: string }> => 'col' in t);
  if (new Set(cols.filter((t) => sides.side.has(t.col)).map((t) => t.col)).size > 1) return undefined;
  if (new Set(cols.filter((t) => sides.watermarked.has(t.col)).map((t) => t.col)).size > 1) return undefined;
  const constraint = cols.filter((t) => sides.side.has(t.col));
  if (constraint.length !== 1 || !constraint[0]!.negated) return undefined;
  let sum = 0;
  for (const t of terms) {
    if (t === constraint[0]) continue;
    if ('col' in t) {
      // Only the other side's watermarked column has a known value.
      if (!sides.watermarked.has(t.col)) return undefined;
      sum += t.negated ? -watermarkMs : watermarkMs;
    } else sum += t.negated ? -t.ms : t.ms;
  }
  return Math.trunc(sum);
}

/**
 * The state value watermark of `sides.side` under `condition` with the other side's watermark at
 * `watermarkMs`: rows of the side whose time is at or below it can be evicted. Undefined when no
 * conjunct bounds the side's time.
 */
export function stateValueWatermark(condition: Expr, sides: JoinBoundSides, watermarkMs: number): number | undefined {
  if (sides.watermarked.size === 0) return undefined;
  let least: number | undefined;
  for (const c of conjuncts(condition)) {
    if (c.op !== 'binary') continue;
    // The eviction is inclusive: a bound from `time >= W` keeps W, so it evicts below W - 1.
    const bound =
      c.fn === 'lt'
        ? solveLessThan(c.left, c.right, sides, watermarkMs)
        : c.fn === 'leq'
          ? minusOne(solveLessThan(c.left, c.right, sides, watermarkMs))
          : c.fn === 'gt'
            ? solveLessThan(c.right, c.left, sides, watermarkMs)
            : c.fn === 'geq'
              ? minusOne(solveLessThan(c.right, c.left, sides, watermarkMs))
              : undefined;
    if (bound !== undefined) least = least === undefined ? bound : Math.min(least, bound);
  }
  return least;
}

const minusOne = (x: number | undefined): number | undefined => (x === undefined ? undefined : x - 1);
