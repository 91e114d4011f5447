/**
 * Aggregate and window functions of groupBy(...).agg(...), as in Spark's `functions`: count, sum,
 * avg, min, max, first, last, collect_list, collect_set, the variances and standard deviations,
 * min_by, max_by, count_if, bool_and, bool_or, approx_count_distinct, and window. A string
 * argument names a column; count('*') counts rows.
 */
import type { AggFn, AggSpec, Expr } from '@sluice/executor';

/** The options some aggregates take besides their argument. */
export type AggOptions = Pick<AggSpec, 'ignoreNulls' | 'rsd' | 'percentages' | 'percentagesArray' | 'accuracy'>;
import { SluiceError } from '@sluice/state';
import { Column, toColumn } from './Column.js';
import { parseDuration } from '../conf/parsers.js';

/**
 * An aggregate expression; only groupBy(...).agg(...) takes it. It is a Column, as in Spark, so
 * that `expr("count(*)")` types as one; used anywhere else (a select, a filter, an operand) it is
 * INVALID_EXPRESSION.
 */
export class AggregateColumn extends Column {
  /** @internal */
  constructor(
    /** @internal */
    readonly fn: AggFn,
    /** @internal */
    readonly arg: Expr | null,
    /** The output column's name: Spark's (`count(1)`, `sum(v)`), or the alias. */
    readonly name: string,
    /** The name before any alias: Spark's name for the aggregate (count(1), sum(v)). */
    readonly unaliasedName: string = name,
    /** @internal first and last's ignoreNulls, approx_count_distinct's rsd. */
    readonly options: AggOptions = {},
  ) {
    super({ op: 'col', name });
    Object.defineProperty(this, 'expr', {
      get: (): never => {
        throw new SluiceError('INVALID_EXPRESSION', `aggregate ${name} is allowed only in groupBy(...).agg(...)`);
      },
    });
  }

  /** The aggregate, its output column named `name`. */
  override alias(name: string): AggregateColumn {
    return new AggregateColumn(this.fn, this.arg, name, this.unaliasedName, this.options);
  }

  /** Same as alias. */
  override as(name: string): AggregateColumn {
    return this.alias(name);
  }

  /** The output column's name. */
  override toString(): string {
    return this.name;
  }

  /** @internal The aggregate as the plan holds it. */
  get spec(): AggSpec {
    return { fn: this.fn, arg: this.arg, name: this.name, ...this.options };
  }
}

/**
 * Aggregate `fn` of `arg` (null: of every row, count(1)), named as Spark names it: `fn(x)` for a
 * column or alias x, `fn(expr)` otherwise; `shownAs` is the name a call was written with (mean).
 */
export function aggregateOf(fn: AggFn, arg: Expr | null, shownAs: string = fn, options: AggOptions = {}): AggregateColumn {
  const name = `${shownAs}(${argName(arg)})`;
  return new AggregateColumn(fn, arg, name, name, options);
}

const argName = (arg: Expr | null): string => (arg === null ? '1' : arg.op === 'col' || arg.op === 'alias' ? arg.name : 'expr');

/** min_by(x, ord) and max_by: the aggregate of named_struct(x, ord), named `min_by(x, ord)`. */
export function byOrderingOf(fn: 'min_by' | 'max_by', value: Expr, ordering: Expr): AggregateColumn {
  const arg: Expr = {
    op: 'call',
    fn: 'named_struct',
    args: [{ op: 'lit', value: 'value', type: 'string' }, value, { op: 'lit', value: 'ordering', type: 'string' }, ordering],
  };
  const name = `${fn}(${argName(value)}, ${argName(ordering)})`;
  return new AggregateColumn(fn, arg, name);
}

/** count_if(cond): count(CASE WHEN cond THEN 1 END), named count_if(cond). */
export function countIfOf(cond: Expr): AggregateColumn {
  const name = `count_if(${argName(cond)})`;
  return new AggregateColumn('count', { op: 'when', branches: [{ cond, value: { op: 'lit', value: 1, type: 'int' } }] }, name);
}

/** bool_and(x) is min(x) over booleans (false < true), bool_or(x) max(x); named as written. */
export function boolAggregateOf(fn: 'bool_and' | 'bool_or' | 'every' | 'some' | 'any', arg: Expr): AggregateColumn {
  const name = `${fn}(${argName(arg)})`;
  const cast: Expr = { op: 'cast', expr: arg, to: 'boolean' };
  return new AggregateColumn(fn === 'bool_and' || fn === 'every' ? 'min' : 'max', cast, name);
}

function aggregate(fn: AggFn, c: Column | string): AggregateColumn {
  return aggregateOf(fn, toColumn(c).expr);
}

/** count('*') counts rows (Spark names it count(1)); count(col) counts non-null values. */
export function count(c: Column | string): AggregateColumn {
  if (c === '*') return aggregateOf('count', null);
  return aggregate('count', c);
}

/** The sum of the values (nulls skipped; null when all are): LONG for integers, DOUBLE otherwise. */
export function sum(c: Column | string): AggregateColumn {
  return aggregate('sum', c);
}

/** The mean of the values, a DOUBLE (nulls skipped). */
export function avg(c: Column | string): AggregateColumn {
  return aggregate('avg', c);
}

/** Same as avg, as in Spark. */
export const mean = avg;

/** The least value (nulls skipped). */
export function min(c: Column | string): AggregateColumn {
  return aggregate('min', c);
}

/** The greatest value (nulls skipped). */
export function max(c: Column | string): AggregateColumn {
  return aggregate('max', c);
}

/** first(c[, ignoreNulls]): the first value of the group's rows as they arrive (not deterministic across partitions, as in Spark). */
export const first = (c: Column | string, ignoreNulls = false): AggregateColumn =>
  aggregateOf('first', toColumn(c).expr, 'first', ignoreNulls ? { ignoreNulls } : {});
/** last(c[, ignoreNulls]): the last value of the group's rows as they arrive (not deterministic across partitions, as in Spark). */
export const last = (c: Column | string, ignoreNulls = false): AggregateColumn =>
  aggregateOf('last', toColumn(c).expr, 'last', ignoreNulls ? { ignoreNulls } : {});
/** The values as an array, in the order they arrive, nulls skipped. */
export const collect_list = (c: Column | string): AggregateColumn => aggregate('collect_list', c);
/** The distinct values as an array, nulls skipped. */
export const collect_set = (c: Column | string): AggregateColumn => aggregate('collect_set', c);
/** Same as collect_list (SQL's name). */
export const array_agg = (c: Column | string): AggregateColumn => aggregateOf('collect_list', toColumn(c).expr, 'array_agg');
/** Same as first (SQL's name). */
export const first_value = (c: Column | string, ignoreNulls = false): AggregateColumn =>
  aggregateOf('first', toColumn(c).expr, 'first_value', ignoreNulls ? { ignoreNulls } : {});
/** Same as last (SQL's name). */
export const last_value = (c: Column | string, ignoreNulls = false): AggregateColumn =>
  aggregateOf('last', toColumn(c).expr, 'last_value', ignoreNulls ? { ignoreNulls } : {});
/** Some value of the group (the first to arrive). */
export const any_value = (c: Column | string, ignoreNulls = false): AggregateColumn =>
  aggregateOf('first', toColumn(c).expr, 'any_value', ignoreNulls ? { ignoreNulls } : {});
/** Same as stddev_samp. */
export const std = (c: Column | string): AggregateColumn => aggregateOf('stddev_samp', toColumn(c).expr, 'std');
/** Same as bool_or. */
export const any = (c: Column | string): AggregateColumn => boolAggregateOf('any', toColumn(c).expr);
/** Same as stddev_samp. */
export const stddev = (c: Column | string): AggregateColumn => aggregateOf('stddev_samp', toColumn(c).expr, 'stddev');
/** The sample standard deviation, a DOUBLE (null for one value). */
export const stddev_samp = (c: Column | string): AggregateColumn => aggregate('stddev_samp', c);
/** The population standard deviation, a DOUBLE. */
export const stddev_pop = (c: Column | string): AggregateColumn => aggregate('stddev_pop', c);
/** Same as var_samp. */
export const variance = (c: Column | string): AggregateColumn => aggregateOf('var_samp', toColumn(c).expr, 'variance');
/** The sample variance, a DOUBLE (null for one value). */
export const var_samp = (c: Column | string): AggregateColumn => aggregate('var_samp', c);
/** The population variance, a DOUBLE. */
export const var_pop = (c: Column | string): AggregateColumn => aggregate('var_pop', c);
/** min_by(value, ordering): the value of the row with the least ordering. */
export const min_by = (value: Column | string, ordering: Column | string): AggregateColumn =>
  byOrderingOf('min_by', toColumn(value).expr, toColumn(ordering).expr);
/** max_by(value, ordering): the value of the row with the greatest ordering. */
export const max_by = (value: Column | string, ordering: Column | string): AggregateColumn =>
  byOrderingOf('max_by', toColumn(value).expr, toColumn(ordering).expr);
/** The number of rows where the condition is true. */
export const count_if = (c: Column | string): AggregateColumn => countIfOf(toColumn(c).expr);
/** Whether the condition is true for every row (nulls skipped). */
export const bool_and = (c: Column | string): AggregateColumn => boolAggregateOf('bool_and', toColumn(c).expr);
/** Whether the condition is true for some row (nulls skipped). */
export const bool_or = (c: Column | string): AggregateColumn => boolAggregateOf('bool_or', toColumn(c).expr);
/** Same as bool_and. */
export const every = (c: Column | string): AggregateColumn => boolAggregateOf('every', toColumn(c).expr);
/** Same as bool_or. */
export const some = (c: Column | string): AggregateColumn => boolAggregateOf('some', toColumn(c).expr);
/**
 * percentile_approx(c, percentage[, accuracy]): the least value with at least percentage × n
 * values at or below it, from a sketch of at most 2 × accuracy samples (exact while the group has
 * no more values); an array of percentages gives an array.
 */
export function percentile_approx(c: Column | string, percentage: number | number[], accuracy = 10_000): AggregateColumn {
  return percentileOf('percentile_approx', toColumn(c).expr, percentage, accuracy, 'percentile_approx');
}
/** Same as percentile_approx. */
export const approx_percentile = (c: Column | string, percentage: number | number[], accuracy = 10_000): AggregateColumn =>
  percentileOf('percentile_approx', toColumn(c).expr, percentage, accuracy, 'approx_percentile');
/** percentile(c, percentage): the exact percentile, interpolated between values, as Spark's (every value is kept). */
export const percentile = (c: Column | string, percentage: number | number[]): AggregateColumn =>
  percentileOf('percentile', toColumn(c).expr, percentage, undefined, 'percentile');
/** median(c): percentile(c, 0.5). */
export const median = (c: Column | string): AggregateColumn => {
  const agg = percentileOf('percentile', toColumn(c).expr, 0.5, undefined, 'median');
  return new AggregateColumn(agg.fn, agg.arg, `median(${argName(agg.arg)})`, `median(${argName(agg.arg)})`, agg.options);
};

/** A percentile aggregate, named as Spark names it: percentile_approx(v, 0.5, 10000). */
export function percentileOf(
  fn: 'percentile' | 'percentile_approx',
  arg: Expr,
  percentage: number | number[],
  accuracy: number | undefined,
  shownAs: string,
): AggregateColumn {
  const percentages = Array.isArray(percentage) ? percentage : [percentage];
  if (!percentages.every((p) => typeof p === 'number'))
    throw new SluiceError('INVALID_EXPRESSION', `${shownAs}: the percentage must be a number or an array of numbers`);
  const shown = Array.isArray(percentage) ? `array(${percentages.join(', ')})` : String(percentage);
  const name = `${shownAs}(${argName(arg)}, ${shown}${accuracy === undefined ? '' : `, ${accuracy}`})`;
  return new AggregateColumn(fn, arg, name, name, { percentages, percentagesArray: Array.isArray(percentage), ...(accuracy !== undefined && { accuracy }) });
}

/** approx_count_distinct(c[, rsd]): a HyperLogLog++ estimate of the distinct values (Spark's rsd 0.05 by default). */
export const approx_count_distinct = (c: Column | string, rsd?: number): AggregateColumn =>
  aggregateOf('approx_count_distinct', toColumn(c).expr, 'approx_count_distinct', rsd === undefined ? {} : { rsd });

/**
 * session_window(timeColumn, gapDuration): the session a row opens, `struct<start, end>` from its
 * time to its time plus the gap. As a groupBy key, sessions of a key merge where they overlap
 * (docs/guides/stateful-operators.md, session windows). The gap is a duration ('5 minutes'), or a column giving one per row
 * (an interval or its text); a row whose gap is not positive belongs to no session.
 */
export function session_window(timeColumn: Column | string, gapDuration: string | number | Column): Column {
  const time = toColumn(timeColumn).expr;
  if (gapDuration instanceof Column) return new Column({ op: 'call', fn: 'session_window', args: [time, gapDuration.expr] });
  const gapMs = parseDuration(gapDuration, 'gapDuration');
  if (!(gapMs > 0)) throw new SluiceError('INVALID_OPTION', `the session gap must be positive, got '${String(gapDuration)}'`, { option: 'gapDuration' });
  return new Column({ op: 'call', fn: 'session_window', args: [time, { op: 'lit', value: `${gapMs} milliseconds`, type: 'interval' }] });
}

/**
 * window(timeColumn, windowDuration[, slideDuration[, startTime]]): the `struct<start, end>` of the
 * window containing each row's time. Tumbling when no slide is given; with a slide, a grouping key
 * that places each row in every window containing it.
 */
export function window(timeColumn: Column | string, windowDuration: string | number, slideDuration?: string | number, startTime: string | number = 0): Column {
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
