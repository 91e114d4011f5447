/**
 * The functions SQL text can call, by Spark's names (case-insensitive), each with its arities and
 * the expression it builds: the same trees as the `functions` exports, so `expr('upper(id)')` and
 * `upper('id')` are one plan. Spark's aliases that mean the same function are listed beside it
 * (`ucase`, `substr`, `ifnull`); forms Spark defines by rewriting (`if`, `nvl2`, `nullif`) are
 * rewritten into CASE the way Spark's own definitions read.
 */
import {
  COLLECTION_FUNCTIONS,
  DATETIME_FUNCTIONS,
  JSON_FUNCTIONS,
  exprName,
  parseDataType,
  functionArity,
  GENERATORS,
  HIGHER_ORDER,
  MATH_FUNCTIONS,
  SCALAR_FUNCTIONS,
  type AggFn,
  type Expr,
  type FunctionName,
} from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { AggregateColumn, aggregateOf, boolAggregateOf, byOrderingOf, countIfOf, percentileOf, window } from '../aggregates.js';
import { Column } from '../Column.js';
import type { Parsed } from './parseExpression.js';

/** An argument of a call in SQL text: an expression, or `*` (count(*)). */
export type SqlArg = { expr: Expr } | { star: true };

interface SqlFunction {
  /** Arities accepted: [min, max] (max Infinity: variadic). */
  arity: [number, number];
  build(args: Expr[], sql: string): Parsed;
}

const column = (expr: Expr): Parsed => ({ kind: 'column', expr });
/** A call of the executor's function `fn`, with the arities the executor gives it. */
const call = (fn: FunctionName): SqlFunction => ({ arity: functionArity(fn), build: (args) => column({ op: 'call', fn, args }) });
const nullLit: Expr = { op: 'lit', value: null, type: 'null' };

/**
 * json_tuple(json, k1, k2, ...): Spark's generator of one row with columns c0, c1, ... holding the
 * keys' values as text; here inline(array(named_struct('c0', get_json_object(json, "$['k1']"), ...))).
 */
export function jsonTuple(json: Expr, keys: Expr[]): Expr {
  const fields = keys.flatMap((k, i): Expr[] => {
    if (k.op !== 'lit' || typeof k.value !== 'string') throw new SluiceError('INVALID_EXPRESSION', 'json_tuple takes its field names as literal strings');
    const path: Expr = { op: 'lit', value: `$['${k.value.replace(/['\\]/g, '\\$&')}']`, type: 'string' };
    return [
      { op: 'lit', value: `c${i}`, type: 'string' },
      { op: 'call', fn: 'get_json_object', args: [json, path] },
    ];
  });
  return { op: 'call', fn: 'inline', args: [{ op: 'call', fn: 'array', args: [{ op: 'call', fn: 'named_struct', args: fields }] }] };
}

/** date_part's fields (and EXTRACT's), Spark's spellings, as the function that gives each. */
const DATE_PART_FIELDS: Record<string, FunctionName> = Object.fromEntries(
  (
    [
      [['YEAR', 'Y', 'YEARS', 'YR', 'YRS'], 'year'],
      [['QUARTER', 'QTR'], 'quarter'],
      [['MONTH', 'MON', 'MONS', 'MONTHS'], 'month'],
      [['WEEK', 'W', 'WEEKS'], 'weekofyear'],
      [['DAY', 'D', 'DAYS', 'DAYOFMONTH'], 'dayofmonth'],
      [['DAYOFWEEK', 'DOW'], 'dayofweek'],
      [['DAYOFWEEK_ISO', 'DOW_ISO'], 'weekday'],
      [['DOY'], 'dayofyear'],
      [['HOUR', 'H', 'HOURS', 'HR', 'HRS'], 'hour'],
      [['MINUTE', 'M', 'MIN', 'MINS', 'MINUTES'], 'minute'],
      [['SECOND', 'S', 'SEC', 'SECONDS', 'SECS'], 'second'],
    ] as Array<[string[], FunctionName]>
  ).flatMap(([names, fn]) => names.map((n) => [n, fn])),
);

/**
 * date_part(field, source) and EXTRACT(field FROM source): the field's function of the source;
 * SECOND has its fraction, as Spark's (a DOUBLE here, a DECIMAL there), and DAYOFWEEK_ISO is 1
 * (Monday) to 7.
 */
export function datePart(field: string, source: Expr, sql: string): Expr {
  const fn = DATE_PART_FIELDS[field.toUpperCase()];
  if (fn === undefined) {
    throw new SluiceError(
      'INVALID_EXPRESSION',
      `[INVALID_EXTRACT_FIELD] cannot extract ${field} from a date or timestamp; the fields are ${Object.keys(DATE_PART_FIELDS).join(', ')} (in '${sql}')`,
    );
  }
  const call = (f: FunctionName, ...args: Expr[]): Expr => ({ op: 'call', fn: f, args });
  const num = (value: number): Expr => ({ op: 'lit', value, type: 'int' });
  if (fn === 'second') return { op: 'binary', fn: 'divide', left: call('pmod', call('unix_millis', source), num(60_000)), right: num(1000) };
  if (fn === 'weekday') return { op: 'binary', fn: 'plus', left: call('weekday', source), right: num(1) };
  return call(fn, source);
}

/** An aggregate call, named as Spark names it (count(*) is count(1)). */
function aggregate(fn: AggFn, shownAs: string = fn) {
  return (args: Expr[]): Parsed => ({ kind: 'aggregate', agg: aggregateOf(fn, args[0] ?? null, shownAs) });
}

/** percentile(x, p) and percentile_approx(x, p[, accuracy]): p a literal number or array(...) of them. */
function percentileCall(fn: 'percentile' | 'percentile_approx', shownAs: string, [x, p, accuracy]: Expr[], sql: string): Parsed {
  const number = (e: Expr | undefined): number | undefined => (e?.op === 'lit' && typeof e.value === 'number' ? e.value : undefined);
  const list = p?.op === 'call' && p.fn === 'array' ? p.args.map(number) : undefined;
  const percentage = list ?? number(p);
  if (percentage === undefined || (Array.isArray(percentage) && percentage.some((v) => v === undefined))) {
    throw new SluiceError('INVALID_EXPRESSION', `${shownAs}: the percentage must be a literal number or array(...) of numbers (in '${sql}')`);
  }
  const acc = accuracy === undefined ? undefined : number(accuracy);
  if (accuracy !== undefined && acc === undefined)
    throw new SluiceError('INVALID_EXPRESSION', `${shownAs}: the accuracy must be a literal integer (in '${sql}')`);
  return { kind: 'aggregate', agg: percentileOf(fn, x!, percentage as number | number[], acc, shownAs) };
}

/** first(x[, ignoreNulls]) and last: ignoreNulls a literal boolean. */
function firstOrLast(fn: 'first' | 'last', [x, ignore]: Expr[], sql: string, shownAs: string = fn): Parsed {
  if (ignore !== undefined && !(ignore.op === 'lit' && typeof ignore.value === 'boolean')) {
    throw new SluiceError('INVALID_EXPRESSION', `${shownAs}: ignoreNulls must be a literal true or false (in '${sql}')`);
  }
  return { kind: 'aggregate', agg: aggregateOf(fn, x!, shownAs, ignore?.op === 'lit' && ignore.value === true ? { ignoreNulls: true } : {}) };
}

/** A literal string or number argument (window durations), else INVALID_EXPRESSION. */
function literalArg(e: Expr | undefined, fn: string, what: string, sql: string): string | number | undefined {
  if (e === undefined) return undefined;
  if (e.op === 'lit' && (typeof e.value === 'string' || typeof e.value === 'number')) return e.value;
  throw new SluiceError('INVALID_EXPRESSION', `${fn}: ${what} must be a literal string such as '10 minutes' (in '${sql}')`);
}

const FUNCTIONS: Record<string, SqlFunction> = {
  upper: call('upper'),
  lower: call('lower'),
  length: call('length'),
  trim: call('trim'),
  concat: call('concat'),
  substring: call('substring'),
  coalesce: call('coalesce'),
  ifnull: { arity: [2, 2], build: call('coalesce').build },
  nvl: { arity: [2, 2], build: call('coalesce').build },
  /** if(cond, a, b): CASE WHEN cond THEN a ELSE b END. */
  if: { arity: [3, 3], build: ([c, a, b]) => column({ op: 'when', branches: [{ cond: c!, value: a! }], otherwise: b! }) },
  /** nvl2(x, a, b): a when x is not null, else b. */
  nvl2: {
    arity: [3, 3],
    build: ([x, a, b]) => column({ op: 'when', branches: [{ cond: { op: 'unary', fn: 'isNotNull', expr: x! }, value: a! }], otherwise: b! }),
  },
  /** nullif(a, b): null when a = b, else a. */
  nullif: {
    arity: [2, 2],
    build: ([a, b]) => column({ op: 'when', branches: [{ cond: { op: 'binary', fn: 'equalTo', left: a!, right: b! }, value: nullLit }], otherwise: a! }),
  },
  mod: { arity: [2, 2], build: ([a, b]) => column({ op: 'binary', fn: 'mod', left: a!, right: b! }) },
  isnull: { arity: [1, 1], build: ([x]) => column({ op: 'unary', fn: 'isNull', expr: x! }) },
  isnotnull: { arity: [1, 1], build: ([x]) => column({ op: 'unary', fn: 'isNotNull', expr: x! }) },
  not: { arity: [1, 1], build: ([x]) => column({ op: 'unary', fn: 'not', expr: x! }) },
  negative: { arity: [1, 1], build: ([x]) => column({ op: 'unary', fn: 'negate', expr: x! }) },
  positive: { arity: [1, 1], build: ([x]) => column(x!) },
  named_struct: call('named_struct'),
  json_tuple: { arity: [2, Infinity], build: ([json, ...keys]) => column(jsonTuple(json!, keys)) },
  // The try_ forms of the arithmetic: what Spark's non-ANSI operators already do (null, not an error).
  try_add: { arity: [2, 2], build: ([a, b]) => column({ op: 'binary', fn: 'plus', left: a!, right: b! }) },
  try_subtract: { arity: [2, 2], build: ([a, b]) => column({ op: 'binary', fn: 'minus', left: a!, right: b! }) },
  try_multiply: { arity: [2, 2], build: ([a, b]) => column({ op: 'binary', fn: 'multiply', left: a!, right: b! }) },
  try_divide: { arity: [2, 2], build: ([a, b]) => column({ op: 'binary', fn: 'divide', left: a!, right: b! }) },
  /** equal_null(a, b): a <=> b. */
  equal_null: {
    arity: [2, 2],
    build: ([a, b]) => {
      const isNull = (e: Expr): Expr => ({ op: 'unary', fn: 'isNull', expr: e });
      return column({
        op: 'when',
        branches: [
          { cond: isNull(a!), value: isNull(b!) },
          { cond: isNull(b!), value: { op: 'lit', value: false, type: 'boolean' } },
        ],
        otherwise: { op: 'binary', fn: 'equalTo', left: a!, right: b! },
      });
    },
  },
  date_part: {
    arity: [2, 2],
    build: ([field, source], sql) => column(datePart(String(literalArg(field, 'date_part', 'the field', sql)), source!, sql)),
  },
  /** struct(a, b): fields named after the columns, col1, col2... for other expressions (Spark's rule). */
  struct: {
    arity: [1, Infinity],
    build: (args) =>
      column({
        op: 'call',
        fn: 'named_struct',
        args: args.flatMap((e, i): Expr[] => [{ op: 'lit', value: e.op === 'col' ? (e.name.split('.').pop() as string) : `col${i + 1}`, type: 'string' }, e]),
      }),
  },
  count: { arity: [1, 1], build: aggregate('count') },
  sum: { arity: [1, 1], build: aggregate('sum') },
  avg: { arity: [1, 1], build: aggregate('avg') },
  mean: { arity: [1, 1], build: aggregate('avg', 'mean') },
  min: { arity: [1, 1], build: aggregate('min') },
  max: { arity: [1, 1], build: aggregate('max') },
  first: { arity: [1, 2], build: (args, sql) => firstOrLast('first', args, sql) },
  first_value: { arity: [1, 2], build: (args, sql) => firstOrLast('first', args, sql, 'first_value') },
  last: { arity: [1, 2], build: (args, sql) => firstOrLast('last', args, sql) },
  last_value: { arity: [1, 2], build: (args, sql) => firstOrLast('last', args, sql, 'last_value') },
  any_value: { arity: [1, 2], build: (args, sql) => firstOrLast('first', args, sql, 'any_value') },
  collect_list: { arity: [1, 1], build: aggregate('collect_list') },
  array_agg: { arity: [1, 1], build: aggregate('collect_list', 'array_agg') },
  collect_set: { arity: [1, 1], build: aggregate('collect_set') },
  stddev: { arity: [1, 1], build: aggregate('stddev_samp', 'stddev') },
  std: { arity: [1, 1], build: aggregate('stddev_samp', 'std') },
  stddev_samp: { arity: [1, 1], build: aggregate('stddev_samp') },
  stddev_pop: { arity: [1, 1], build: aggregate('stddev_pop') },
  variance: { arity: [1, 1], build: aggregate('var_samp', 'variance') },
  var_samp: { arity: [1, 1], build: aggregate('var_samp') },
  var_pop: { arity: [1, 1], build: aggregate('var_pop') },
  min_by: { arity: [2, 2], build: ([v, o]) => ({ kind: 'aggregate', agg: byOrderingOf('min_by', v!, o!) }) },
  max_by: { arity: [2, 2], build: ([v, o]) => ({ kind: 'aggregate', agg: byOrderingOf('max_by', v!, o!) }) },
  count_if: { arity: [1, 1], build: ([c]) => ({ kind: 'aggregate', agg: countIfOf(c!) }) },
  bool_and: { arity: [1, 1], build: ([c]) => ({ kind: 'aggregate', agg: boolAggregateOf('bool_and', c!) }) },
  every: { arity: [1, 1], build: ([c]) => ({ kind: 'aggregate', agg: boolAggregateOf('every', c!) }) },
  bool_or: { arity: [1, 1], build: ([c]) => ({ kind: 'aggregate', agg: boolAggregateOf('bool_or', c!) }) },
  some: { arity: [1, 1], build: ([c]) => ({ kind: 'aggregate', agg: boolAggregateOf('some', c!) }) },
  any: { arity: [1, 1], build: ([c]) => ({ kind: 'aggregate', agg: boolAggregateOf('any', c!) }) },
  percentile_approx: { arity: [2, 3], build: (args, sql) => percentileCall('percentile_approx', 'percentile_approx', args, sql) },
  approx_percentile: { arity: [2, 3], build: (args, sql) => percentileCall('percentile_approx', 'approx_percentile', args, sql) },
  percentile: { arity: [2, 2], build: (args, sql) => percentileCall('percentile', 'percentile', args, sql) },
  median: {
    arity: [1, 1],
    build: ([x], sql) => {
      const p = percentileCall('percentile', 'median', [x!, { op: 'lit', value: 0.5, type: 'double' }], sql);
      return p.kind === 'aggregate'
        ? { kind: 'aggregate', agg: new AggregateColumn(p.agg.fn, p.agg.arg, `median(${exprName(x!)})`, `median(${exprName(x!)})`, p.agg.options) }
        : p;
    },
  },
  approx_count_distinct: {
    arity: [1, 2],
    build: ([x, rsd], sql) => {
      const r = literalArg(rsd, 'approx_count_distinct', 'the relative standard deviation', sql);
      return { kind: 'aggregate', agg: aggregateOf('approx_count_distinct', x!, 'approx_count_distinct', r === undefined ? {} : { rsd: Number(r) }) };
    },
  },
  window: {
    arity: [2, 4],
    build: ([time, size, slide, start], sql) =>
      column(
        window(
          new Column(time!),
          literalArg(size, 'window', 'the window duration', sql) as string,
          literalArg(slide, 'window', 'the slide duration', sql),
          literalArg(start, 'window', 'the start time', sql) ?? 0,
        ).expr,
      ),
  },
};

/** Spark's other names for the same functions. */
const ALIASES: Record<string, string> = {
  ucase: 'upper',
  lcase: 'lower',
  char_length: 'length',
  character_length: 'length',
  len: 'length',
  substr: 'substring',
  ceiling: 'ceil',
  sign: 'signum',
  power: 'pow',
  char: 'chr',
  regexp_like: 'rlike',
  cardinality: 'size',
  day: 'dayofmonth',
  date_diff: 'datediff',
  dateadd: 'date_add',
  printf: 'format_string',
  try_element_at: 'element_at',
  try_to_timestamp: 'to_timestamp',
  now: 'current_timestamp',
  curdate: 'current_date',
};

/** Spark's casts written as calls: date(x) is CAST(x AS DATE). */
const CASTS = ['string', 'int', 'bigint', 'smallint', 'tinyint', 'double', 'float', 'boolean', 'date', 'timestamp'];
for (const t of CASTS) {
  FUNCTIONS[t] = { arity: [1, 1], build: ([x]) => column({ op: 'cast', expr: x!, to: parseDataType(t) }) };
}

/** The executor's table functions (math, strings, collections) and generators, each a call of its own name. */
for (const name of [...Object.keys(SCALAR_FUNCTIONS), ...GENERATORS, ...HIGHER_ORDER]) FUNCTIONS[name] = call(name as FunctionName);

/** The kind of each function defined here; the executor's table functions are math or string. */
const KINDS: Record<string, string> = {
  upper: 'string',
  lower: 'string',
  length: 'string',
  trim: 'string',
  concat: 'string',
  substring: 'string',
  coalesce: 'conditional',
  ifnull: 'conditional',
  nvl: 'conditional',
  if: 'conditional',
  nvl2: 'conditional',
  nullif: 'conditional',
  isnull: 'predicate',
  isnotnull: 'predicate',
  not: 'predicate',
  negative: 'math',
  positive: 'math',
  mod: 'math',
  count: 'aggregate',
  sum: 'aggregate',
  avg: 'aggregate',
  mean: 'aggregate',
  min: 'aggregate',
  max: 'aggregate',
  ...Object.fromEntries(
    [
      'first',
      'first_value',
      'last',
      'last_value',
      'any_value',
      'collect_list',
      'array_agg',
      'collect_set',
      'stddev',
      'std',
      'stddev_samp',
      'stddev_pop',
      'variance',
      'var_samp',
      'var_pop',
      'min_by',
      'max_by',
      'count_if',
      'bool_and',
      'every',
      'bool_or',
      'some',
      'any',
      'approx_count_distinct',
      'percentile_approx',
      'approx_percentile',
      'percentile',
      'median',
    ].map((n) => [n, 'aggregate']),
  ),
  window: 'time window',
  named_struct: 'collection',
  struct: 'collection',
  json_tuple: 'generator',
  date_part: 'datetime',
  try_add: 'math',
  try_subtract: 'math',
  try_multiply: 'math',
  try_divide: 'math',
  equal_null: 'predicate',
  ...Object.fromEntries(GENERATORS.map((g) => [g, 'generator'])),
  ...Object.fromEntries(HIGHER_ORDER.map((g) => [g, 'higher-order'])),
  ...Object.fromEntries(CASTS.map((t) => [t, 'cast'])),
};

const arityText = ([min, max]: [number, number]): string => (min === max ? `${min}` : max === Infinity ? `${min} or more` : `${min} to ${max}`);

/**
 * The function reference of docs/reference/sql-functions.md, made from this registry (a test keeps the page in step):
 * one row per function, by kind, then name.
 */
export function sqlFunctionTable(): string {
  const kindOf = (name: string): string =>
    KINDS[name] ??
    (Object.hasOwn(MATH_FUNCTIONS, name)
      ? 'math'
      : Object.hasOwn(COLLECTION_FUNCTIONS, name)
        ? 'collection'
        : Object.hasOwn(DATETIME_FUNCTIONS, name)
          ? 'datetime'
          : Object.hasOwn(JSON_FUNCTIONS, name)
            ? 'json'
            : 'string');
  const aliases = (name: string): string =>
    Object.keys(ALIASES)
      .filter((a) => ALIASES[a] === name)
      .sort()
      .map((a) => `\`${a}\``)
      .join(', ');
  const rows = Object.entries(FUNCTIONS)
    .map(([name, f]) => ({ name, kind: kindOf(name), f }))
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name))
    .map(({ name, kind, f }) => `| ${kind} | \`${name}\` | ${aliases(name)} | ${name === 'count' ? '1 (or `*`)' : arityText(f.arity)} |`);
  return ['| kind | function | also | arguments |', '|---|---|---|---|', ...rows].join('\n');
}

/** The function names SQL text can call (aliases included), sorted. */
export function sqlFunctionNames(): string[] {
  return [...Object.keys(FUNCTIONS), ...Object.keys(ALIASES)].sort();
}

/** Builds the call `name(args)`: UNRESOLVED_ROUTINE for an unknown name, WRONG_NUM_ARGS for a wrong count. */
export function resolveFunction(name: string, args: SqlArg[], sql: string): Parsed {
  const key = name.toLowerCase();
  const f = FUNCTIONS[ALIASES[key] ?? key];
  if (f === undefined) {
    throw new SluiceError(
      'UNRESOLVED_ROUTINE',
      `[UNRESOLVED_ROUTINE] Cannot resolve routine \`${name}\` (in '${sql}'); the functions are: ${sqlFunctionNames().join(', ')}`,
    );
  }
  const star = args.some((a) => 'star' in a);
  if (star && !(key === 'count' && args.length === 1)) {
    throw new SluiceError('INVALID_EXPRESSION', `${name}(*): only count takes * (in '${sql}')`);
  }
  // count(*) and count(1) both count rows.
  const exprs = args.flatMap((a) => ('star' in a ? [] : [a.expr]));
  if (key === 'count' && (star || (exprs[0]?.op === 'lit' && exprs[0].value !== null))) return aggregate('count')([]);
  const [min, max] = f.arity;
  if (exprs.length < min || exprs.length > max) {
    const expected = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    throw new SluiceError('WRONG_NUM_ARGS', `[WRONG_NUM_ARGS] ${key} requires ${expected} parameters but ${exprs.length} were given (in '${sql}')`);
  }
  const built = f.build(exprs, sql);
  if (built.kind === 'aggregate' || key === 'window') return built; // Spark names a window column `window`
  // Spark names a call by the name it was written with: ucase(id), nvl(a, b), (IF(c, a, b)).
  const shown = exprs.map((e) => exprName(e)).join(', ');
  const sparkName = key === 'if' ? `(IF(${shown}))` : `${key}(${shown})`;
  return sparkName === exprName(built.expr) ? built : { ...built, name: sparkName };
}
