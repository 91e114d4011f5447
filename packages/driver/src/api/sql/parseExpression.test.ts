/**
 * SQL expression text, evaluated: each case is an example of Spark's built-in function and
 * operator documentation (or of its parser's precedence) with the result Spark gives, parsed by
 * `expr` and computed by the row evaluator. Then the forms a column reference takes, aggregates,
 * and the errors Spark's parser gives.
 */
import { describe, expect, it } from 'vitest';
import { exprName, exprType, type Schema } from '@sluice/executor';
// The evaluator is worker-side code that the executor package does not export.
import { compileExpr } from '../../../../executor/src/expressions/compileExpr.js';
import { thrown } from '../../../../executor/src/expressions/exprTestKit.js';
import { AggregateColumn, count, sum } from '../aggregates.js';
import { Column } from '../Column.js';
import * as F from '../functions.js';
import { abs, bround, ceil, col, expr, floor, greatest, isnan, least, log, nanvl, pmod, pow, round, sqrt, upper } from '../functions.js';
import { readFileSync } from 'node:fs';
import { sqlFunctionNames, sqlFunctionTable } from './sqlFunctions.js';

const SCHEMA: Schema = [
  { name: 'id', type: 'string', nullable: true },
  { name: 'v', type: 'double', nullable: true },
  { name: 'n', type: 'long', nullable: true },
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 'date', type: 'string', nullable: true },
  { name: 'a.b', type: 'long', nullable: true },
  {
    name: 'window',
    type: {
      struct: [
        { name: 'start', type: 'timestamp', nullable: true },
        { name: 'end', type: 'timestamp', nullable: true },
      ],
    },
    nullable: true,
  },
];
const ROW = { id: 'Spark', v: 2.5, n: 7, ts: Date.UTC(2024, 0, 1, 12), date: 'today', 'a.b': 3, window: { start: 0, end: 600_000 } };

const evaluate = (sql: string): unknown => compileExpr(expr(sql).expr, SCHEMA)(ROW);

const errorOf = thrown;

/** [SQL, Spark's result]: the examples of Spark's function reference, as `SELECT <SQL>` gives them. */
const SPARK_EXAMPLES: Array<[string, unknown]> = [
  // Operators (Spark's built-in functions: !, %, *, +, -, /, <, <=, <=>, =, ==, >, >=, and, or, div, between, in).
  ['3 % 2', 1],
  ['MOD(2, 1.8)', 0.2],
  ['2 * 3', 6],
  ['1 + 2', 3],
  ['2 - 1', 1],
  ['3 / 2', 1.5],
  ['2L / 2L', 1],
  ['3 div 2', 1],
  ['1 < 2', true],
  ['1.1 < 1', false],
  ['2 <= 2', true],
  ['2 <=> 2', true],
  ['true <=> NULL', false],
  ['NULL <=> NULL', true],
  ['2 = 2', true],
  ['true = NULL', null],
  ['NULL = NULL', null],
  ['2 == 2', true],
  ['2 > 1', true],
  ['2 >= 1', true],
  ['1 != 2', true],
  ['1 <> 1', false],
  ['! true', false],
  ['! false', true],
  ['! NULL', null],
  ['not true', false],
  ['not NULL', null],
  ['true and true', true],
  ['true and false', false],
  ['true and NULL', null],
  ['false and NULL', false],
  ['true or false', true],
  ['false or false', false],
  ['true or NULL', true],
  ['false or NULL', null],
  ['0.5 between 0.1 AND 1.0', true],
  ['1 in(1, 2, 3)', true],
  ['1 in(2, 3, 4)', false],
  ['-(1)', -1],
  ['negative(1)', -1],
  ['positive(1)', 1],
  // Conditionals and nulls.
  ['coalesce(NULL, 1, NULL)', 1],
  ["if(1 < 2, 'a', 'b')", 'a'],
  ['ifnull(NULL, 2)', 2],
  ['nvl(NULL, 2)', 2],
  ['nullif(2, 2)', null],
  ['nvl2(NULL, 2, 1)', 1],
  ['isnull(1)', false],
  ['isnotnull(1)', true],
  ['CASE WHEN 1 > 0 THEN 1 WHEN 2 > 0 THEN 2.0 ELSE 1.2 END', 1],
  ['CASE WHEN 1 < 0 THEN 1 WHEN 2 > 0 THEN 2.0 ELSE 1.2 END', 2],
  ['CASE WHEN 1 < 0 THEN 1 WHEN 2 < 0 THEN 2.0 END', null],
  // Strings.
  ["ucase('SparkSql')", 'SPARKSQL'],
  ["upper('SparkSql')", 'SPARKSQL'],
  ["lcase('SparkSql')", 'sparksql'],
  ["lower('SparkSql')", 'sparksql'],
  ["length('Spark SQL ')", 10],
  ["CHAR_LENGTH('Spark SQL ')", 10],
  ["CHARACTER_LENGTH('Spark SQL ')", 10],
  ["concat('Spark', 'SQL')", 'SparkSQL'],
  ["substr('Spark SQL', 5)", 'k SQL'],
  ["substr('Spark SQL', -3)", 'SQL'],
  ["substr('Spark SQL', 5, 1)", 'k'],
  ["substr('Spark SQL' FROM 5)", 'k SQL'],
  ["substr('Spark SQL' FROM -3)", 'SQL'],
  ["substr('Spark SQL' FROM 5 FOR 1)", 'k'],
  ["substring('Spark SQL', 5)", 'k SQL'],
  ["substring('Spark SQL', -3)", 'SQL'],
  ["substring('Spark SQL', 5, 1)", 'k'],
  ["substring('Spark SQL' FROM 5 FOR 1)", 'k'],
  ["trim('    SparkSQL   ')", 'SparkSQL'],
  ["'Spark' || 'SQL'", 'SparkSQL'],
  // Math.
  ['abs(-1)', 1],
  ['acos(1)', 0],
  ['acos(2)', NaN],
  ['asin(0)', 0],
  ['asin(2)', NaN],
  ['atan(0)', 0],
  ['atan2(0, 0)', 0],
  ['bround(2.5, 0)', 2],
  ['bround(25, -1)', 20],
  ['cbrt(27.0)', 3],
  ['ceil(-0.1)', 0],
  ['ceil(5)', 5],
  ['ceiling(-0.1)', 0],
  ['cos(0)', 1],
  ['cosh(0)', 1],
  ['cot(1)', 0.6420926159343306],
  ['degrees(3.141592653589793)', 180],
  ['e()', Math.E],
  ['exp(0)', 1],
  ['expm1(0)', 0],
  ['floor(-0.1)', -1],
  ['floor(5)', 5],
  ['greatest(10, 9, 2, 4, 3)', 10],
  ['hypot(3, 4)', 5],
  ["isnan(cast('NaN' as double))", true],
  ['least(10, 9, 2, 4, 3)', 2],
  ['ln(1)', 0],
  ['log(10, 100)', 2],
  ['log10(10)', 1],
  ['log1p(0)', 0],
  ['log2(2)', 1],
  ["nanvl(cast('NaN' as double), 123)", 123],
  ['pi()', Math.PI],
  ['pmod(10, 3)', 1],
  ['pmod(-10, 3)', 2],
  ['pow(2, 3)', 8],
  ['power(2, 3)', 8],
  ['radians(180)', Math.PI],
  ['round(2.5, 0)', 3],
  ['sign(40)', 1],
  ['signum(40)', 1],
  ['sin(0)', 0],
  ['sinh(0)', 0],
  ['sqrt(4)', 2],
  ['tan(0)', 0],
  ['tanh(0)', 0],
  // More strings.
  ["concat_ws(' ', 'Spark', 'SQL')", 'Spark SQL'],
  ["concat_ws('s')", ''],
  ["concat_ws('/', 'foo', null, 'bar')", 'foo/bar'],
  ["concat_ws(null, 'Spark', 'SQL')", null],
  ["instr('SparkSQL', 'SQL')", 6],
  ["locate('bar', 'foobarbar')", 4],
  ["locate('bar', 'foobarbar', 5)", 7],
  ["lpad('hi', 5, '??')", '???hi'],
  ["lpad('hi', 1, '??')", 'h'],
  ["lpad('hi', 5)", '   hi'],
  ["rpad('hi', 5, '??')", 'hi???'],
  ["rpad('hi', 1, '??')", 'h'],
  ["rpad('hi', 5)", 'hi   '],
  ["ltrim('    SparkSQL   ')", 'SparkSQL   '],
  ["rtrim('    SparkSQL   ')", '    SparkSQL'],
  ["replace('ABCabc', 'abc', 'DEF')", 'ABCDEF'],
  ["translate('AaBbCc', 'abc', '123')", 'A1B2C3'],
  ["initcap('sPark sql')", 'Spark Sql'],
  ["reverse('Spark SQL')", 'LQS krapS'],
  ["repeat('123', 2)", '123123'],
  ["substring_index('www.apache.org', '.', 2)", 'www.apache'],
  ["split_part('11.12.13', '.', 3)", '13'],
  ["left('Spark SQL', 3)", 'Spa'],
  ["right('Spark SQL', 3)", 'SQL'],
  ["ascii('222')", 50],
  ['ascii(2)', 50],
  ['char(65)', 'A'],
  ['chr(65)', 'A'],
  ["md5('Spark')", '8cde774d6f7333752ed72cacddb05126'],
  ["sha1('Spark')", '85f5955f4b27a9a4c2aab6ffe5d7189fc298b92c'],
  ["sha2('Spark', 256)", '529bc3b07127ecb7e53a4dcf1991d9152c24537d919178022b2c42657f79a26b'],
  ["crc32('Spark')", 1557323817],
  ["base64('Spark SQL')", 'U3BhcmsgU1FM'],
  ['hex(17)', '11'],
  ["hex('Spark SQL')", '537061726B2053514C'],
  ["regexp_extract('100-200', '(\\\\d+)-(\\\\d+)', 1)", '100'],
  ["regexp_replace('100-200', '(\\\\d+)', 'num')", 'num-num'],
  ["like('Spark', '_park')", true],
  ["'Spark' like '_park'", true],
  // Casts.
  ["cast('10' as int)", 10],
  ["'10'::int", 10],
  ["CAST('2.5' AS DOUBLE) * 2", 5],
];

/** [SQL, result]: precedence and associativity as Spark's grammar has them, and the rewritten forms. */
const PRECEDENCE: Array<[string, unknown]> = [
  ['1 + 2 * 3', 7],
  ['(1 + 2) * 3', 9],
  ['10 - 2 - 3', 5],
  ['2 * 3 % 4', 2],
  ['-2 * 3', -6],
  ['1 = 1 AND 2 = 3 OR true', true],
  ['true OR true AND false', true],
  ['NOT 1 = 2', true],
  ['NOT true AND false', false],
  ['1 + 1 = 2', true],
  ['1 = 1 IS NULL', false],
  ['1 IN (1, NULL)', true],
  ['2 IN (1, NULL)', null],
  ['2 NOT IN (1, 3)', true],
  ['NULL IN (1)', null],
  ['5 NOT BETWEEN 1 AND 3', true],
  ['2 BETWEEN 1 AND 3 AND false', false],
  ['3 IS DISTINCT FROM NULL', true],
  ['NULL IS NOT DISTINCT FROM NULL', true],
  ['1 IS DISTINCT FROM 1', false],
  ['NULL IS NULL', true],
  ['1 IS NOT NULL', true],
  ['NULL IS TRUE', false],
  ['NULL IS NOT FALSE', true],
  ['NULL IS UNKNOWN', true],
  ["'Spark' 'SQL'", 'SparkSQL'],
  ["'it\\'s'", "it's"],
  ['"double quoted"', 'double quoted'],
  ['1 /* a comment */ + 1 -- and a line comment', 2],
  ["TIMESTAMP '2024-01-01 00:00:00'", Date.UTC(2024, 0, 1)],
  ["TIMESTAMP '2024-01-01 12:30:15.250'", Date.UTC(2024, 0, 1, 12, 30, 15, 250)],
  ["DATE '2024-02-29'", Date.UTC(2024, 1, 29) / 86_400_000],
  ['array(1, 2, 3)[1]', 2],
  ["'S%park' LIKE 'S!%%' ESCAPE '!'", true],
  ["'Spark' LIKE 'S!%%' ESCAPE '!'", false],
  ["'a\\b' LIKE 'a\\b' ESCAPE '#'", true],
  ['array(1, 2, 3)[3]', null],
  ["map('a', 1)['a']", 1],
  ["CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END", 'two'],
];

/** [SQL, result]: the null behaviour and edge cases of the math functions, as Spark gives them. */
const MATH_EDGES: Array<[string, unknown]> = [
  ['abs(NULL)', null],
  ['round(NULL, 1)', null],
  ['greatest(NULL, 1, NULL)', 1],
  ['greatest(NULL, NULL)', null],
  ["greatest(1, cast('NaN' as double))", NaN],
  ["least(1, cast('NaN' as double))", 1],
  ['isnan(NULL)', false],
  ['ln(0)', null],
  ['log(-1)', null],
  ['log10(0)', null],
  ['pmod(5, 0)', null],
  ['round(-2.5)', -3],
  ['round(2.675, 2)', 2.68],
  ['round(1234.5678, -2)', 1200],
  ['bround(3.5)', 4],
  ['bround(-2.5)', -2],
  ['round(v * 3, 1)', 7.5],
  ['floor(v)', 2],
  ['ceil(v)', 3],
  ["sqrt('16')", 4],
  ['abs(-7L)', 7],
];

/** [SQL, result]: LIKE, RLIKE and the string functions' edges. */
const STRING_EDGES: Array<[string, unknown]> = [
  ["'Spark' LIKE 'S%k'", true],
  ["'Spark' LIKE 's%'", false],
  ["'Spark' NOT LIKE 's%'", true],
  ["'Spark' ILIKE 's%'", true],
  ["'a_b' LIKE 'a\\\\_b'", true],
  ["'axb' LIKE 'a\\\\_b'", false],
  ["'a.c' LIKE 'a.c'", true],
  ["'abc' LIKE 'a.c'", false],
  ["'line1\nline2' LIKE 'line1%'", true],
  ["NULL LIKE 'a'", null],
  ["'Spark' RLIKE 'ar'", true],
  ["'Spark' REGEXP '^S'", true],
  ["regexp_like('Spark', 'x')", false],
  ["regexp_extract('abc', 'x(y)', 1)", ''],
  ["regexp_extract('a1b22', '(\\\\d+)', 0)", '1'],
  ["regexp_replace('a1b22', '(\\\\d+)', '<$1>')", 'a<1>b<22>'],
  ["locate('bar', 'foobarbar', 0)", 0],
  ["instr('😀ab', 'a')", 2],
  ["lpad('😀', 3, 'x')", 'xx😀'],
  ["reverse('a😀b')", 'b😀a'],
  ["substring_index('www.apache.org', '.', -2)", 'apache.org'],
  ["split_part('11.12.13', '.', -1)", '13'],
  ["split_part('11.12.13', '.', 5)", ''],
  ["sha2('Spark', 7)", null],
  ['hex(-1)', 'FFFFFFFFFFFFFFFF'],
  ['upper(concat_ws(id, id, id))', 'SPARKSPARKSPARK'],
  ["replace('aaa', 'a')", ''],
];

/** [SQL, result] over the row `ROW`: column references. */
const COLUMNS: Array<[string, unknown]> = [
  ['v * 2', 5],
  ['V * 2', 5],
  ['`id`', 'Spark'],
  ['upper(id)', 'SPARK'],
  ['UPPER(ID)', 'SPARK'],
  ['date', 'today'],
  ['`a.b` + 1', 4],
  ['window.start', 0],
  ['window.`end`', 600_000],
  ['n % 4 = 3 AND v > 2', true],
  ["ts = TIMESTAMP '2024-01-01 12:00:00'", true],
  ["CASE WHEN v > 2 THEN 'big' ELSE 'small' END", 'big'],
  ['coalesce(NULL, n)', 7],
];

describe('SQL expressions', () => {
  it.each(SPARK_EXAMPLES)("Spark's example SELECT %s gives %s", (sql, expected) => {
    const got = evaluate(sql);
    if (Number.isNaN(expected)) expect(got).toBeNaN();
    else if (typeof expected === 'number' && !Number.isInteger(expected)) expect(got).toBeCloseTo(expected, 12);
    else expect(got).toEqual(expected);
  });

  it.each(PRECEDENCE)('%s gives %j', (sql, expected) => {
    expect(evaluate(sql)).toEqual(expected);
  });

  it.each(STRING_EDGES)('%s gives %j', (sql, expected) => {
    expect(evaluate(sql)).toEqual(expected);
  });

  it.each(MATH_EDGES)('%s gives %j', (sql, expected) => {
    expect(evaluate(sql)).toEqual(expected);
  });

  it('types the math results as Spark does: floor and ceil BIGINT, abs and pmod the argument type, the rest DOUBLE', () => {
    const type = (sql: string) => exprType(expr(sql).expr, SCHEMA);
    expect(type('floor(v)')).toBe('long');
    expect(type('ceil(1)')).toBe('long');
    expect(type('abs(1)')).toBe('int');
    expect(type('abs(n)')).toBe('long');
    expect(type('pmod(n, 3)')).toBe('long');
    expect(type('round(n, -1)')).toBe('long');
    expect(type('round(v)')).toBe('double');
    expect(type('sqrt(n)')).toBe('double');
    expect(type('isnan(v)')).toBe('boolean');
    expect(errorOf(() => exprType(expr('sqrt(window)').expr, SCHEMA)).code).toBe('DATATYPE_MISMATCH');
  });

  it('the math functions exported for Column calls compute what their SQL forms do', () => {
    const value = (c: Column) => compileExpr(c.expr, SCHEMA)(ROW);
    const pairs: Array<[Column, string]> = [
      [abs(col('n').negate()), 'abs(-n)'],
      [round('v'), 'round(v)'],
      [round(col('v').multiply(3), 1), 'round(v * 3, 1)'],
      [bround('v'), 'bround(v)'],
      [floor('v'), 'floor(v)'],
      [ceil('v'), 'ceil(v)'],
      [sqrt('n'), 'sqrt(n)'],
      [log(10, 'n'), 'log(10, n)'],
      [log('n'), 'ln(n)'],
      [pow('v', 2), 'pow(v, 2)'],
      [pmod(col('n').negate(), 3), 'pmod(-n, 3)'],
      [greatest('v', 'n'), 'greatest(v, n)'],
      [least('v', 'n'), 'least(v, n)'],
      [isnan('v'), 'isnan(v)'],
      [nanvl('v', 'n'), 'nanvl(v, n)'],
    ];
    for (const [c, sql] of pairs) expect(value(c), sql).toEqual(evaluate(sql));
    expect(value(round('v'))).toBe(3);
    expect(exprName(round('v').expr, SCHEMA)).toBe('round(v, 0)');
    expect(() => round('v', 1.5)).toThrow(expect.objectContaining({ code: 'INVALID_EXPRESSION' }));
  });

  it('the string functions exported for Column calls compute what their SQL forms do', () => {
    const value = (c: Column) => compileExpr(c.expr, SCHEMA)(ROW);
    const pairs: Array<[Column, string]> = [
      [F.concat_ws('-', 'id', 'date'), "concat_ws('-', id, date)"],
      [F.instr('id', 'ar'), "instr(id, 'ar')"],
      [F.locate('a', 'id', 2), "locate('a', id, 2)"],
      [F.lpad('id', 8, '*'), "lpad(id, 8, '*')"],
      [F.rpad('id', 3, '*'), "rpad(id, 3, '*')"],
      [F.ltrim(F.lpad('id', 7, ' ')), "ltrim(lpad(id, 7, ' '))"],
      [F.rtrim(F.rpad('id', 7, ' ')), "rtrim(rpad(id, 7, ' '))"],
      [F.replace('id', 'ar', 'AR'), "replace(id, 'ar', 'AR')"],
      [F.translate('id', 'Sa', 's@'), "translate(id, 'Sa', 's@')"],
      [F.initcap('date'), 'initcap(date)'],
      [F.reverse('id'), 'reverse(id)'],
      [F.repeat('id', 2), 'repeat(id, 2)'],
      [F.substring_index('id', 'a', 1), "substring_index(id, 'a', 1)"],
      [F.split_part('id', 'a', 2), "split_part(id, 'a', 2)"],
      [F.left('id', 2), 'left(id, 2)'],
      [F.right('id', 2), 'right(id, 2)'],
      [F.ascii('id'), 'ascii(id)'],
      [F.md5('id'), 'md5(id)'],
      [F.sha1('id'), 'sha1(id)'],
      [F.sha2('id', 512), 'sha2(id, 512)'],
      [F.crc32('id'), 'crc32(id)'],
      [F.base64('id'), 'base64(id)'],
      [F.hex('n'), 'hex(n)'],
      [F.regexp_extract('id', '(p)(a)', 2), "regexp_extract(id, '(p)(a)', 2)"],
      [F.regexp_replace('id', '[aeiou]', '_'), "regexp_replace(id, '[aeiou]', '_')"],
      [col('id').like('Sp%'), "id LIKE 'Sp%'"],
      [col('id').ilike('sp%'), "id ILIKE 'sp%'"],
      [col('id').rlike('k$'), "id RLIKE 'k$'"],
    ];
    for (const [c, sql] of pairs) {
      const got = value(c);
      expect(got, sql).not.toBeNull();
      expect(got, sql).toEqual(evaluate(sql));
    }
    expect(value(F.regexp_replace('id', '[aeiou]', '_'))).toBe('Sp_rk');
    expect(value(col('id').like('Sp%'))).toBe(true);
  });

  it.each(COLUMNS)('%s over a row gives %j', (sql, expected) => {
    expect(evaluate(sql)).toEqual(expected);
  });

  it('types numeric literals as Spark does: INT, then BIGINT past 2^31, L BIGINT, D and exponents DOUBLE', () => {
    const type = (sql: string) => exprType(expr(sql).expr, SCHEMA);
    expect(type('1')).toBe('int');
    expect(type('-2147483648')).toBe('int');
    expect(type('2147483648')).toBe('long');
    expect(type('1L')).toBe('long');
    expect(type('1.5D')).toBe('double');
    expect(type('1e3')).toBe('double');
    expect(evaluate('1e3')).toBe(1000);
    expect(type("'10'::bigint")).toBe('long');
    expect(type('n::string')).toBe('string');
  });

  it('builds the same plan as the Column calls, named as Spark names it', () => {
    expect(expr('upper(id)').expr).toEqual(upper('id').expr);
    // SQL's 10 is an INT literal, where lit(10) is a LONG.
    const ten = new Column({ op: 'lit', value: 10, type: 'int' });
    expect(expr('v > 10 AND id IS NOT NULL').expr).toEqual(col('v').gt(ten).and(col('id').isNotNull()).expr);
    expect(exprName(expr('upper(id)').expr, SCHEMA)).toBe('upper(id)');
    expect(exprName(expr('upper(id) AS name').expr, SCHEMA)).toBe('name');
    expect(exprName(expr('upper(id) name').expr, SCHEMA)).toBe('name');
    expect(exprName(expr('v * 2 AS `twice v`').expr, SCHEMA)).toBe('twice v');
    expect(exprName(expr('CAST(n AS DOUBLE)').expr, SCHEMA)).toBe('n');
  });

  it('gives aggregates for agg(): count(*), count(1), sum(x) with an alias', () => {
    const all = expr('count(*)');
    expect(all).toBeInstanceOf(AggregateColumn);
    expect((all as AggregateColumn).spec).toEqual(count('*').spec);
    expect((expr('COUNT(1)') as AggregateColumn).spec).toEqual(count('*').spec);
    expect((expr('sum(v) AS total') as AggregateColumn).spec).toEqual(sum('v').alias('total').spec);
    expect((expr('count(id)') as AggregateColumn).spec).toEqual({ fn: 'count', arg: { op: 'col', name: 'id' }, name: 'count(id)' });
    // An aggregate is a whole expression of agg(), never a part of one, nor a plain column.
    expect(errorOf(() => expr('sum(v) + 1')).code).toBe('INVALID_EXPRESSION');
    expect(errorOf(() => expr('upper(max(id))')).code).toBe('INVALID_EXPRESSION');
    expect(errorOf(() => expr('count(*)').expr).code).toBe('INVALID_EXPRESSION');
    expect(errorOf(() => expr('count(*)').plus(1)).code).toBe('INVALID_EXPRESSION');
  });

  it("gives window(ts, '10 minutes') as the window function does", () => {
    const w = expr("window(ts, '10 minutes')").expr;
    expect(w).toEqual({ op: 'window', expr: { op: 'col', name: 'ts' }, sizeMs: 600_000, slideMs: 600_000, startMs: 0 });
    expect(expr("window(ts, '10 minutes', '5 minutes')").expr).toMatchObject({ sizeMs: 600_000, slideMs: 300_000 });
    expect(errorOf(() => expr('window(ts, id)')).code).toBe('INVALID_EXPRESSION');
  });

  it("is PARSE_SYNTAX_ERROR naming the token and position as Spark's parser does", () => {
    const end = errorOf(() => expr('1 +'));
    expect(end.code).toBe('PARSE_SYNTAX_ERROR');
    expect(end.message).toContain('Syntax error at or near end of input');
    expect(end.message).toContain('(line 1, pos 3)');
    const extra = errorOf(() => expr('a b c'));
    expect(extra.code).toBe('PARSE_SYNTAX_ERROR');
    expect(extra.message).toContain("Syntax error at or near 'c'");
    expect(extra.message).toContain('(line 1, pos 4)');
    expect(errorOf(() => expr('(1 + 2')).message).toContain('end of input');
    expect(errorOf(() => expr("'open")).message).toContain('unclosed string literal');
    expect(errorOf(() => expr('CASE END')).code).toBe('PARSE_SYNTAX_ERROR');
    expect(errorOf(() => expr('1 +\n  * 2')).message).toContain("at or near '*'");
    expect(errorOf(() => expr('1 +\n  * 2')).message).toContain('(line 2, pos 2)');
    expect(errorOf(() => expr('1 +\n  * 2')).line).toBe(2);
    expect(errorOf(() => expr('#')).code).toBe('PARSE_SYNTAX_ERROR');
  });

  it('is UNRESOLVED_ROUTINE for an unknown function and WRONG_NUM_ARGS for a wrong count', () => {
    const unknown = errorOf(() => expr('no_such_fn(1)'));
    expect(unknown.code).toBe('UNRESOLVED_ROUTINE');
    expect(unknown.message).toContain('`no_such_fn`');
    const wrong = errorOf(() => expr("upper('a', 'b')"));
    expect(wrong.code).toBe('WRONG_NUM_ARGS');
    expect(wrong.message).toContain('upper requires 1 parameters but 2 were given');
    expect(errorOf(() => expr('upper(*)')).code).toBe('INVALID_EXPRESSION');
  });

  it('refuses what a stream cannot do, an unknown type, and bitwise operators on non-integers, by name', () => {
    expect(errorOf(() => expr('count(DISTINCT id)'))).toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
      message: expect.stringContaining('approx_count_distinct'),
    });
    expect(errorOf(() => expr('CAST(1 AS no_type)')).code).toBe('INVALID_EXPRESSION');
    expect(errorOf(() => exprType(expr('v & 1').expr, SCHEMA))).toMatchObject({
      code: 'DATATYPE_MISMATCH',
      message: expect.stringContaining('bitwise operators need integers'),
    });
    expect(errorOf(() => exprType(expr('~ id').expr, SCHEMA))).toMatchObject({ code: 'DATATYPE_MISMATCH' });
    expect(exprName(expr('n & 3').expr)).toBe('(n & 3)');
  });

  it("is documented by docs/reference/sql-functions.md's function table, which the registry makes", () => {
    const readme = readFileSync(new URL('../../../../../docs/reference/sql-functions.md', import.meta.url), 'utf8');
    const block = /<!-- function-table:start -->\n([\s\S]*?)\n<!-- function-table:end -->/.exec(readme)?.[1];
    expect(block, 'docs/reference/sql-functions.md: run node scripts/function-table.mjs').toBe(sqlFunctionTable());
    for (const name of sqlFunctionNames()) expect(block).toContain(`\`${name}\``);
  });

  it('has every SQL function as a functions export too, but the casts, if, e, pi and map (create_map)', async () => {
    const exports: Record<string, unknown> = { ...(await import('../functions.js')), ...(await import('../aggregates.js')) };
    const sqlOnly = sqlFunctionNames().filter((n) => typeof exports[n] !== 'function');
    expect(sqlOnly).toEqual(['bigint', 'boolean', 'date', 'double', 'e', 'float', 'if', 'int', 'map', 'pi', 'smallint', 'string', 'timestamp', 'tinyint']);
    expect(typeof exports.create_map).toBe('function');
  });

  it('lists its functions with their aliases', () => {
    expect(sqlFunctionNames()).toEqual(expect.arrayContaining(['upper', 'ucase', 'substr', 'coalesce', 'nvl2', 'count', 'window']));
  });
});

describe('SQL expression names', () => {
  it.each([
    ['v DIV 3', '(v div 3)'],
    ['n IN (1, 2)', '(n IN (1, 2))'],
    ['n NOT IN (1, 2)', '(NOT (n IN (1, 2)))'],
    ['n <=> 1', '(n <=> 1)'],
    ['n IS DISTINCT FROM 1', '(NOT (n <=> 1))'],
    ['ucase(id)', 'ucase(id)'],
    ['upper(id)', 'upper(id)'],
    ['nvl(id, id)', 'nvl(id, id)'],
    ["if(v > 1, 'a', 'b')", '(IF((v > 1), a, b))'],
    ['v BETWEEN 1 AND 2', '((v >= 1) AND (v <= 2))'],
    ['n IN (1, 2) AS k', 'k'],
  ])('an unaliased %s is named %s, as Spark names it', (sql, name) => {
    expect(exprName(expr(sql).expr, SCHEMA)).toBe(name);
  });
});
