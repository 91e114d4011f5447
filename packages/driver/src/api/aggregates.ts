/**
 * Aggregate and window functions of groupBy(...).agg(...), as in Spark's `functions`:
 * count, sum, avg, min, max and window. A string argument names a column; count('*') counts rows.
 */
import type { AggFn, AggSpec, Expr } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Column, toColumn } from './Column.js';
import { parseDuration } from '../conf/parsers.js';

/**
 * An aggregate expression; only groupBy(...).agg(...) takes it. It is a Column, as in Spark, so
 * that `expr("count(*)")` types as one; used anywhere else (a select, a filter, an operand) it is
 * INVALID_EXPRESSION.
 */
export class AggregateColumn extends Column {
  constructor(
    readonly fn: AggFn,
    readonly arg: Expr | null,
    readonly name: string,
    /** The name before any alias: Spark's name for the aggregate (count(1), sum(v)). */
    readonly unaliasedName: string = name,
  ) {
    super({ op: 'col', name });
    Object.defineProperty(this, 'expr', {
      get: (): never => {
        throw new SluiceError('INVALID_EXPRESSION', `aggregate ${name} is allowed only in groupBy(...).agg(...)`);
      },
    });
  }

  override alias(name: string): AggregateColumn {
    return new AggregateColumn(this.fn, this.arg, name, this.unaliasedName);
  }

  override as(name: string): AggregateColumn {
    return this.alias(name);
  }

  override toString(): string {
    return this.name;
  }

  get spec(): AggSpec {
    return { fn: this.fn, arg: this.arg, name: this.name };
  }
}

/**
 * Aggregate `fn` of `arg` (null: of every row, count(1)), named as Spark names it: `fn(x)` for a
 * column or alias x, `fn(expr)` otherwise; `shownAs` is the name a call was written with (mean).
 */
export function aggregateOf(fn: AggFn, arg: Expr | null, shownAs: string = fn): AggregateColumn {
  const argName = arg === null ? '1' : arg.op === 'col' || arg.op === 'alias' ? arg.name : 'expr';
  return new AggregateColumn(fn, arg, `${shownAs}(${argName})`);
}

function aggregate(fn: AggFn, c: Column | string): AggregateColumn {
  return aggregateOf(fn, toColumn(c).expr);
}

/** count('*') counts rows (Spark names it count(1)); count(col) counts non-null values. */
export function count(c: Column | string): AggregateColumn {
  if (c === '*') return aggregateOf('count', null);
  return aggregate('count', c);
}

export function sum(c: Column | string): AggregateColumn {
  return aggregate('sum', c);
}

export function avg(c: Column | string): AggregateColumn {
  return aggregate('avg', c);
}

export const mean = avg;

export function min(c: Column | string): AggregateColumn {
  return aggregate('min', c);
}

export function max(c: Column | string): AggregateColumn {
  return aggregate('max', c);
}

/**
 * window(timeColumn, windowDuration[, slideDuration[, startTime]]): the struct<start, end> of the
 * window containing each row's time. Tumbling when no slide is given; with a slide, a grouping key
 * that places each row in every window containing it.
 */
export function window(
  timeColumn: Column | string,
  windowDuration: string | number,
  slideDuration?: string | number,
  startTime: string | number = 0,
): Column {
  const sizeMs = parseDuration(windowDuration, 'windowDuration');
  const slideMs = slideDuration === undefined ? sizeMs : parseDuration(slideDuration, 'slideDuration');
  const startMs = parseDuration(startTime, 'startTime');
  if (sizeMs <= 0 || slideMs <= 0) {
    throw new SluiceError('INVALID_OPTION', 'window durations must be positive', { option: sizeMs <= 0 ? 'windowDuration' : 'slideDuration' });
  }
  if (slideMs > sizeMs) {
    throw new SluiceError('INVALID_OPTION', `the slide (${slideMs} ms) must not exceed the window (${sizeMs} ms)`, {
      option: 'slideDuration',
    });
  }
  return new Column({ op: 'window', expr: toColumn(timeColumn).expr, sizeMs, slideMs, startMs: startMs % slideMs });
}
