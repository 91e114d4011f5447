/**
 * Spark's documented function examples, ported as they are written there: the SQL text of
 * `SELECT <text>` and the result as Spark's SQL shell prints it (HiveResult's form: [1,2,null],
 * {1:"a"}, {"a":1}, NULL, 2024-01-01). Each text runs two ways: parsed by `expr` and computed by
 * the row evaluator, and as `session.sql('SELECT <text> AS r').collect()` on the executors; each
 * value is printed from its type. (The math, string and operator examples are in
 * packages/driver/src/api/sql/parseExpression.test.ts, checked as JavaScript values.)
 */
import { describe, expect, it } from 'vitest';
import { exprType, rowToInternal } from '@sluice/executor';
import { expr } from '@sluice/driver';
// The evaluator and the printer are worker-side and test code that the executor package does not export.
import { compileExpr } from '../packages/executor/src/expressions/compileExpr.js';
import { hiveString } from '../packages/executor/src/expressions/exprTestKit.js';
import { useSession } from './helpers.js';

function printed(sql: string): string {
  const e = expr(sql).expr;
  return hiveString(compileExpr(e, [])({}), exprType(e, []));
}

const session = useSession();

async function printedBySql(sql: string): Promise<string> {
  const df = session().sql(`SELECT ${sql} AS r`);
  const rows = await df.collect();
  expect(rows).toHaveLength(1);
  return hiveString(rowToInternal(rows[0]!, df.schema).r, df.schema[0]!.type);
}

/** [SQL, Spark's printed result]: the examples of Spark's array, map and struct functions. */
const COLLECTION_EXAMPLES: Array<[string, string]> = [
  ['array(1, 2, 3)', '[1,2,3]'],
  ['array_contains(array(1, 2, 3), 2)', 'true'],
  ['arrays_overlap(array(1, 2, 3), array(3, 4, 5))', 'true'],
  ['array_distinct(array(1, 2, 3, null, 3))', '[1,2,3,null]'],
  ['array_except(array(1, 2, 3), array(1, 3, 5))', '[2]'],
  ['array_intersect(array(1, 2, 3), array(1, 3, 5))', '[1,3]'],
  ["array_join(array('hello', 'world'), ' ')", 'hello world'],
  ["array_join(array('hello', null ,'world'), ' ')", 'hello world'],
  ["array_join(array('hello', null ,'world'), ' ', ',')", 'hello , world'],
  ['array_max(array(1, 20, null, 3))', '20'],
  ['array_min(array(1, 20, null, 3))', '1'],
  ['array_position(array(312, 773, 708, 708), 708)', '3'],
  ['array_remove(array(1, 2, 3, null, 3), 3)', '[1,2,null]'],
  ["array_repeat('123', 2)", '["123","123"]'],
  ['array_union(array(1, 2, 3), array(1, 3, 5))', '[1,2,3,5]'],
  ["array_append(array('b', 'd', 'c', 'a'), 'd')", '["b","d","c","a","d"]'],
  ['array_append(array(1, 2, 3, null), null)', '[1,2,3,null,null]'],
  ["array_prepend(array('b', 'd', 'c', 'a'), 'd')", '["d","b","d","c","a"]'],
  ['array_compact(array(1, 2, 3, null))', '[1,2,3]'],
  ['arrays_zip(array(1, 2, 3), array(2, 3, 4))', '[{"0":1,"1":2},{"0":2,"1":3},{"0":3,"1":4}]'],
  ['arrays_zip(array(1, 2), array(2, 3), array(3, 4))', '[{"0":1,"1":2,"2":3},{"0":2,"1":3,"2":4}]'],
  ['array_insert(array(1, 2, 3, 4), 5, 5)', '[1,2,3,4,5]'],
  ['array_insert(array(5, 4, 3, 2), -1, 1)', '[5,4,3,2,1]'],
  ['array_insert(array(5, 3, 2, 1), -4, 4)', '[5,4,3,2,1]'],
  ['array_insert(array(1, 2), 4, 9)', '[1,2,null,9]'],
  ['array_compact(array("a", "b", "c"))', '["a","b","c"]'],
  ["array_size(array('b', 'd', 'c', 'a'))", '4'],
  ["cardinality(array('b', 'd', 'c', 'a'))", '4'],
  ["cardinality(map('a', 1, 'b', 2))", '2'],
  ["size(array('b', 'd', 'c', 'a'))", '4'],
  ["size(map('a', 1, 'b', 2))", '2'],
  ['size(NULL)', '-1'],
  ['element_at(array(1, 2, 3), 2)', '2'],
  ["element_at(map(1, 'a', 2, 'b'), 2)", 'b'],
  ['element_at(array(1, 2, 3), -1)', '3'],
  ['element_at(array(1, 2, 3), 5)', 'NULL'],
  ['get(array(1, 2, 3), 0)', '1'],
  ['get(array(1, 2, 3), 3)', 'NULL'],
  ['get(array(1, 2, 3), -1)', 'NULL'],
  ['flatten(array(array(1, 2), array(3, 4)))', '[1,2,3,4]'],
  ["map(1.0, '2', 3.0, '4')", '{1.0:"2",3.0:"4"}'],
  ["map_concat(map(1, 'a', 2, 'b'), map(3, 'c'))", '{1:"a",2:"b",3:"c"}'],
  ["map_contains_key(map(1, 'a', 2, 'b'), 1)", 'true'],
  ["map_contains_key(map(1, 'a', 2, 'b'), 3)", 'false'],
  ["map_entries(map(1, 'a', 2, 'b'))", '[{"key":1,"value":"a"},{"key":2,"value":"b"}]'],
  ["map_from_arrays(array(1.0, 3.0), array('2', '4'))", '{1.0:"2",3.0:"4"}'],
  ["map_from_entries(array(struct(1, 'a'), struct(2, 'b')))", '{1:"a",2:"b"}'],
  ["map_keys(map(1, 'a', 2, 'b'))", '[1,2]'],
  ["map_values(map(1, 'a', 2, 'b'))", '["a","b"]'],
  ["str_to_map('a:1,b:2,c:3', ',', ':')", '{"a":"1","b":"2","c":"3"}'],
  ["str_to_map('a')", '{"a":null}'],
  ['named_struct("a", 1, "b", 2, "c", 3)', '{"a":1,"b":2,"c":3}'],
  ['struct(1, 2)', '{"col1":1,"col2":2}'],
  ['sequence(1, 5)', '[1,2,3,4,5]'],
  ['sequence(5, 1)', '[5,4,3,2,1]'],
  ['sequence(1, 9, 4)', '[1,5,9]'],
  ['slice(array(1, 2, 3, 4), 2, 2)', '[2,3]'],
  ['slice(array(1, 2, 3, 4), -2, 2)', '[3,4]'],
  ["sort_array(array('b', 'd', null, 'c', 'a'), true)", '[null,"a","b","c","d"]'],
  ["sort_array(array('b', 'd', null, 'c', 'a'), false)", '["d","c","b","a",null]'],
  ["array_sort(array('b', 'd', null, 'c', 'a'))", '["a","b","c","d",null]'],
  ["split('oneAtwoBthreeC', '[ABC]')", '["one","two","three",""]'],
  ["split('oneAtwoBthreeC', '[ABC]', -1)", '["one","two","three",""]'],
  ["split('oneAtwoBthreeC', '[ABC]', 2)", '["one","twoBthreeC"]'],
  ["split('abc', '')", '["a","b","c"]'],
  ["split('', ',')", '[""]'],
  ['reverse(array(2, 1, 4, 3))', '[3,4,1,2]'],
  ['concat(array(1, 2, 3), array(4, 5), array(6))', '[1,2,3,4,5,6]'],
  ['transform(array(1, 2, 3), x -> x + 1)', '[2,3,4]'],
  ['transform(array(1, 2, 3), (x, i) -> x + i)', '[1,3,5]'],
  ['filter(array(1, 2, 3), x -> x % 2 == 1)', '[1,3]'],
  ['filter(array(0, 2, 3), (x, i) -> x > i)', '[2,3]'],
  ['filter(array(0, null, 2, 3, null), x -> x IS NOT NULL)', '[0,2,3]'],
  ['exists(array(1, 2, 3), x -> x % 2 == 0)', 'true'],
  ['exists(array(1, 2, 3), x -> x % 2 == 10)', 'false'],
  ['exists(array(1, null, 3), x -> x % 2 == 0)', 'NULL'],
  ['exists(array(0, null, 2, 3, null), x -> x IS NULL)', 'true'],
  ['exists(array(1, 2, 3), x -> x IS NULL)', 'false'],
  ['forall(array(1, 2, 3), x -> x % 2 == 0)', 'false'],
  ['forall(array(2, 4, 8), x -> x % 2 == 0)', 'true'],
  ['forall(array(1, null, 3), x -> x % 2 == 0)', 'false'],
  ['forall(array(2, null, 8), x -> x % 2 == 0)', 'NULL'],
  ['aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x)', '6'],
  ['aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x, acc -> acc * 10)', '60'],
  ["zip_with(array(1, 2, 3), array('a', 'b', 'c'), (x, y) -> (y, x))", '[{"y":"a","x":1},{"y":"b","x":2},{"y":"c","x":3}]'],
  ['zip_with(array(1, 2), array(3, 4), (x, y) -> x + y)', '[4,6]'],
  ["zip_with(array('a', 'b', 'c'), array('d', 'e', 'f'), (x, y) -> concat(x, y))", '["ad","be","cf"]'],
  ['map_filter(map(1, 0, 2, 2, 3, -1), (k, v) -> k > v)', '{1:0,3:-1}'],
  ['transform_keys(map_from_arrays(array(1, 2, 3), array(1, 2, 3)), (k, v) -> k + 1)', '{2:1,3:2,4:3}'],
  ['transform_keys(map_from_arrays(array(1, 2, 3), array(1, 2, 3)), (k, v) -> k + v)', '{2:1,4:2,6:3}'],
  ['transform_values(map_from_arrays(array(1, 2, 3), array(1, 2, 3)), (k, v) -> v + 1)', '{1:2,2:3,3:4}'],
  ['transform_values(map_from_arrays(array(1, 2, 3), array(1, 2, 3)), (k, v) -> k + v)', '{1:2,2:4,3:6}'],
  ['CAST(array(1, 2) AS STRING)', '[1, 2]'],
  ["CAST(map('a', 1) AS STRING)", '{a -> 1}'],
  ['array(1, 2) = array(1, 2)', 'true'],
  ['array_contains(array(1, null), 2)', 'NULL'],
];

/**
 * [SQL, Spark's printed result]: the examples of Spark's date and time functions. Spark's reference
 * prints the zone-dependent ones in America/Los_Angeles; Sluice's session time zone is UTC, so
 * those (from_unixtime, unix_timestamp, timestamp_*) show the UTC result.
 */
const DATETIME_EXAMPLES: Array<[string, string]> = [
  ["add_months('2016-08-31', 1)", '2016-09-30'],
  ["date_add('2016-07-30', 1)", '2016-07-31'],
  ["date_sub('2016-07-30', 1)", '2016-07-29'],
  ["datediff('2009-07-31', '2009-07-30')", '1'],
  ["datediff('2009-07-30', '2009-07-31')", '-1'],
  ["date_diff('2009-07-31', '2009-07-30')", '1'],
  ["date_format('2016-04-08', 'y')", '2016'],
  ["date_format(TIMESTAMP '2016-04-08 13:05:09.5', 'yyyy-MM-dd HH:mm:ss.SSS')", '2016-04-08 13:05:09.500'],
  ["date_format(TIMESTAMP '2016-04-08 13:05:09', 'EEE, d MMM yyyy hh:mm a')", 'Fri, 8 Apr 2016 01:05 PM'],
  ["date_format(DATE '2016-04-08', 'EEEE MMMM dd yy QQQ D')", 'Friday April 08 16 Q2 99'],
  ["date_format(TIMESTAMP '2016-04-08 13:05:09', \"yyyy-MM-dd'T'HH:mm:ssXXX\")", '2016-04-08T13:05:09Z'],
  ["date_trunc('YEAR', '2015-03-05T09:32:05.359')", '2015-01-01 00:00:00'],
  ["date_trunc('MM', '2015-03-05T09:32:05.359')", '2015-03-01 00:00:00'],
  ["date_trunc('DD', '2015-03-05T09:32:05.359')", '2015-03-05 00:00:00'],
  ["date_trunc('HOUR', '2015-03-05T09:32:05.359')", '2015-03-05 09:00:00'],
  ["date_trunc('MILLISECOND', '2015-03-05T09:32:05.123456')", '2015-03-05 09:32:05.123'],
  ["date_trunc('WEEK', '2019-08-04 10:00:00')", '2019-07-29 00:00:00'],
  ["date_trunc('QUARTER', '2019-08-04 10:00:00')", '2019-07-01 00:00:00'],
  ["dayofmonth('2009-07-30')", '30'],
  ["day('2009-07-30')", '30'],
  ["dayofweek('2009-07-30')", '5'],
  ["dayofyear('2016-04-09')", '100'],
  ["from_unixtime(0, 'yyyy-MM-dd HH:mm:ss')", '1970-01-01 00:00:00'],
  ['from_unixtime(0)', '1970-01-01 00:00:00'],
  ["hour('2009-07-30 12:58:59')", '12'],
  ["minute('2009-07-30 12:58:59')", '58'],
  ["second('2009-07-30 12:58:59')", '59'],
  ["last_day('2009-01-12')", '2009-01-31'],
  ["last_day('2024-02-10')", '2024-02-29'],
  ['make_date(2013, 7, 15)', '2013-07-15'],
  ['make_date(2019, 7, NULL)', 'NULL'],
  ['make_date(2019, 13, 1)', 'NULL'],
  ['make_date(2019, 2, 30)', 'NULL'],
  ['make_timestamp(2014, 12, 28, 6, 30, 45.887)', '2014-12-28 06:30:45.887'],
  ["make_timestamp(2014, 12, 28, 6, 30, 45.887, 'CET')", '2014-12-28 05:30:45.887'],
  ['make_timestamp(2019, 6, 30, 23, 59, 60)', '2019-07-01 00:00:00'],
  ['make_timestamp(2019, 6, 30, 23, 59, 1)', '2019-06-30 23:59:01'],
  ['make_timestamp(null, 7, 22, 15, 30, 0)', 'NULL'],
  ["month('2016-07-30')", '7'],
  ["months_between('1997-02-28 10:30:00', '1996-10-30')", '3.94959677'],
  ["months_between('1997-02-28 10:30:00', '1996-10-30', false)", '3.9495967741935485'],
  ["months_between('2024-03-31', '2024-02-29')", '1.0'],
  ["next_day('2015-01-14', 'TU')", '2015-01-20'],
  ["next_day('2015-01-14', 'nope')", 'NULL'],
  ["quarter('2016-08-31')", '3'],
  ['timestamp_millis(1230219000123)', '2008-12-25 15:30:00.123'],
  ['timestamp_seconds(1230219000)', '2008-12-25 15:30:00'],
  ['timestamp_seconds(1230219000.123)', '2008-12-25 15:30:00.123'],
  ["to_date('2009-07-30 04:17:52')", '2009-07-30'],
  ["to_date('2016-12-31', 'yyyy-MM-dd')", '2016-12-31'],
  ["to_date('12/31/2016', 'MM/dd/yyyy')", '2016-12-31'],
  ["to_date('2016-13-31', 'yyyy-MM-dd')", 'NULL'],
  ["to_timestamp('2016-12-31 00:12:00')", '2016-12-31 00:12:00'],
  ["to_timestamp('2016-12-31', 'yyyy-MM-dd')", '2016-12-31 00:00:00'],
  ["to_timestamp('31 Dec 2016 10:07:08 PM', 'dd MMM yyyy hh:mm:ss a')", '2016-12-31 22:07:08'],
  ["to_timestamp('2016-12-31 10:07:08.25+02:00', 'yyyy-MM-dd HH:mm:ss.SSXXX')", '2016-12-31 08:07:08.25'],
  ["to_timestamp('2016-12-31', 'yyyy-MM-dd HH')", 'NULL'],
  ["trunc('2019-08-04', 'week')", '2019-07-29'],
  ["trunc('2019-08-04', 'quarter')", '2019-07-01'],
  ["trunc('2009-02-12', 'MM')", '2009-02-01'],
  ["trunc('2015-10-27', 'YEAR')", '2015-01-01'],
  ["trunc('2015-10-27', 'DAY')", 'NULL'],
  ['unix_date(DATE("1970-01-02"))', '1'],
  ["unix_millis(TIMESTAMP('1970-01-01 00:00:01Z'))", '1000'],
  ["unix_seconds(TIMESTAMP('1970-01-01 00:00:01Z'))", '1'],
  ["unix_timestamp('2016-04-08', 'yyyy-MM-dd')", '1460073600'],
  ["to_unix_timestamp('2016-04-08', 'yyyy-MM-dd')", '1460073600'],
  ["unix_timestamp(TIMESTAMP '2016-04-08 00:00:01')", '1460073601'],
  ["weekday('2009-07-30')", '3'],
  ["weekofyear('2008-02-20')", '8'],
  ["weekofyear('2021-01-01')", '53'],
  ["year('2016-07-30')", '2016'],
  ['date_from_unix_date(1)', '1970-01-02'],
  ["from_utc_timestamp('2016-08-31', 'Asia/Seoul')", '2016-08-31 09:00:00'],
  ["to_utc_timestamp('2016-08-31', 'Asia/Seoul')", '2016-08-30 15:00:00'],
  ["from_utc_timestamp('2016-01-31 12:00:00', 'America/New_York')", '2016-01-31 07:00:00'],
  ['make_interval(100, 11, 1, 1, 12, 30, 01.001)', '100 years 11 months 8 days 12 hours 30 minutes 1.001 seconds'],
  ['make_interval(0, 0, 0, 0, 0, 0, 0)', '0 seconds'],
  ["TIMESTAMP '2024-01-31 10:00:00' + INTERVAL 1 MONTH", '2024-02-29 10:00:00'],
  ["TIMESTAMP '2024-01-01 10:00:00' - INTERVAL '90' MINUTE", '2024-01-01 08:30:00'],
  ["TIMESTAMP '2024-01-01 10:00:00' + INTERVAL 1 DAY 2 HOURS", '2024-01-02 12:00:00'],
  ["TIMESTAMP '2024-01-01 10:00:00' + INTERVAL '1 day 30 seconds'", '2024-01-02 10:00:30'],
  ["INTERVAL 2 HOURS + TIMESTAMP '2024-01-01 10:00:00'", '2024-01-01 12:00:00'],
  ["DATE '2024-02-28' + INTERVAL 1 DAY", '2024-02-29'],
  ["DATE '2024-02-28' + 2", '2024-03-01'],
  ["DATE '2024-03-01' - 1", '2024-02-29'],
  ['CAST(INTERVAL 90 MINUTES AS STRING)', '1 hours 30 minutes'],
  ["CAST('2024-02-29' AS DATE)", '2024-02-29'],
  ["CAST(TIMESTAMP '2024-02-29 23:59:59' AS DATE)", '2024-02-29'],
  ["CAST(DATE '2024-02-29' AS TIMESTAMP)", '2024-02-29 00:00:00'],
  ["DATE '2024-02-29' < DATE '2024-03-01'", 'true'],
  ["DATE '2024-02-29' = '2024-02-29'", 'true'],
  ["date_part('YEAR', TIMESTAMP '2019-08-12 01:00:00.123456')", '2019'],
  ["date_part('week', timestamp'2019-08-12 01:00:00.123456')", '33'],
  ["date_part('doy', DATE'2019-08-12')", '224'],
  ["extract(YEAR FROM TIMESTAMP '2019-08-12 01:00:00.123456')", '2019'],
  ["extract(week FROM timestamp'2019-08-12 01:00:00.123456')", '33'],
  ["extract(doy FROM DATE'2019-08-12')", '224'],
  ["extract(SECOND FROM TIMESTAMP '2019-10-01 00:00:01.5')", '1.5'],
  ["extract(DAYOFWEEK_ISO FROM DATE '2019-08-11')", '7'],
];

/** [SQL, Spark's printed result]: the examples of Spark's JSON functions. */
const JSON_EXAMPLES: Array<[string, string]> = [
  ['from_json(\'{"a":1, "b":0.8}\', \'a INT, b DOUBLE\')', '{"a":1,"b":0.8}'],
  [
    'from_json(\'{"teacher": "Alice", "student": [{"name": "Bob", "rank": 1}, {"name": "Charlie", "rank": 2}]}\', \'STRUCT<teacher: STRING, student: ARRAY<STRUCT<name: STRING, rank: INT>>>\')',
    '{"teacher":"Alice","student":[{"name":"Bob","rank":1},{"name":"Charlie","rank":2}]}',
  ],
  ["from_json('[1, 2, null]', 'ARRAY<INT>')", '[1,2,null]'],
  ["from_json('{\"a\": 1}', 'MAP<STRING, INT>')", '{"a":1}'],
  ["from_json('{\"a\" 1}', 'a INT, b STRING')", '{"a":null,"b":null}'],
  ['from_json(\'{"a": "x"}\', \'a INT\')', '{"a":null}'],
  ['from_json(\'{"d": "2024-02-29", "t": "2024-02-29T10:00:00Z"}\', \'d DATE, t TIMESTAMP\')', '{"d":2024-02-29,"t":2024-02-29 10:00:00}'],
  ["from_json(NULL, 'a INT')", 'NULL'],
  ["from_json('{\"time\":\"26/08/2015\"}', 'time Timestamp', map('timestampFormat', 'dd/MM/yyyy'))", '{"time":2015-08-26 00:00:00}'],
  ["from_json('{\"d\":\"08/26/2015\"}', 'd DATE', map('dateFormat', 'MM/dd/yyyy'))", '{"d":2015-08-26}'],
  ['get_json_object(\'{"a":"b"}\', \'$.a\')', 'b'],
  ['get_json_object(\'{"a":{"b":[1,{"c":2}]}}\', \'$.a.b[1].c\')', '2'],
  ['get_json_object(\'{"a":{"b":[1,2]}}\', \'$.a\')', '{"b":[1,2]}'],
  ['get_json_object(\'{"a":[{"b":1},{"b":2}]}\', \'$.a[*].b\')', '[1,2]'],
  [`get_json_object('{"a b":3}', "$['a b']")`, '3'],
  ["get_json_object('{\"a\":1}', '$.z')", 'NULL'],
  ["get_json_object('not json', '$.a')", 'NULL'],
  ["json_array_length('[1,2,3,4]')", '4'],
  ['json_array_length(\'[1,2,3,{"f1":1,"f2":[5,6]},4]\')', '5'],
  ["json_array_length('[1,2')", 'NULL'],
  ["json_object_keys('{}')", '[]'],
  ['json_object_keys(\'{"key": "value"}\')', '["key"]'],
  ['json_object_keys(\'{"f1":"abc","f2":{"f3":"a", "f4":"b"}}\')', '["f1","f2"]'],
  ['schema_of_json(\'[{"col":0}]\')', 'ARRAY<STRUCT<col: BIGINT>>'],
  ['schema_of_json(\'{"a": 1.5, "b": ["x"], "c": {"d": true}}\')', 'STRUCT<a: DOUBLE, b: ARRAY<STRING>, c: STRUCT<d: BOOLEAN>>'],
  ["to_json(named_struct('a', 1, 'b', 2))", '{"a":1,"b":2}'],
  ["to_json(array(named_struct('a', 1, 'b', 2)))", '[{"a":1,"b":2}]'],
  ["to_json(map('a', named_struct('b', 1)))", '{"a":{"b":1}}'],
  ["to_json(map('a', 1))", '{"a":1}'],
  ["to_json(array(map('a', 1)))", '[{"a":1}]'],
  ["to_json(named_struct('a', 1, 'b', NULL))", '{"a":1}'],
];

/** [SQL, Spark's printed result]: hash, format_string and the byte functions (their bytes shown as text). */
const MISC_EXAMPLES: Array<[string, string]> = [
  ["hash('Spark', array(123), 2)", '-1321691492'],
  ['hash(NULL)', '42'],
  ['3 & 5', '1'],
  ['3 | 5', '7'],
  ['3 ^ 5', '6'],
  ['~ 0', '-1'],
  ['~ 5L', '-6'],
  ['-1L & 12L', '12'],
  ['1 + 2 & 3', '3'],
  ['1 | 2 ^ 3 & 4', '3'],
  ['2 | 1 = 3', 'true'],
  ['shiftleft(2, 1)', '4'],
  ['shiftright(4, 1)', '2'],
  ['shiftrightunsigned(4, 1)', '2'],
  ['shiftrightunsigned(-1, 1)', '2147483647'],
  ['shiftleft(1, 31)', '-2147483648'],
  ['shiftleft(1L, 40)', '1099511627776'],
  ['bit_count(0)', '0'],
  ['bit_count(-1)', '32'],
  ['bit_get(11, 0)', '1'],
  ['bit_get(11, 2)', '0'],
  ["regexp_extract_all('100-200, 300-400', '(\\\\d+)-(\\\\d+)', 1)", '["100","300"]'],
  ["regexp_count('Steven Jones and Stephen Smith are the best players', 'Ste(v|ph)en')", '2'],
  ["elt(1, 'scala', 'java')", 'scala'],
  ["elt(2, 'a', 1)", '1'],
  ["elt(3, 'a', 'b')", 'NULL'],
  ["find_in_set('ab','abc,b,ab,c,def')", '3'],
  ["soundex('Miller')", 'M460'],
  ["soundex('Tymczak')", 'T522'],
  ["soundex('Ashcraft')", 'A261'],
  ["btrim('    SparkSQL   ')", 'SparkSQL'],
  ["btrim('SSparkSQLS', 'SL')", 'parkSQ'],
  ["position('bar', 'foobarbar')", '4'],
  ["position('bar', 'foobarbar', 5)", '7'],
  ["octet_length('Spark SQL')", '9'],
  ["bit_length('Spark SQL')", '72'],
  ["url_encode('https://spark.apache.org')", 'https%3A%2F%2Fspark.apache.org'],
  ["url_decode('https%3A%2F%2Fspark.apache.org')", 'https://spark.apache.org'],
  ["parse_url('http://spark.apache.org/path?query=1', 'HOST')", 'spark.apache.org'],
  ["parse_url('http://spark.apache.org/path?query=1', 'QUERY')", 'query=1'],
  ["parse_url('http://spark.apache.org/path?query=1', 'QUERY', 'query')", '1'],
  ["parse_url('http://spark.apache.org/path?query=1', 'PATH')", '/path'],
  ['equal_null(3, 3)', 'true'],
  ["equal_null(1, '11')", 'false'],
  ['equal_null(true, NULL)', 'false'],
  ["equal_null(NULL, 'abc')", 'false'],
  ['equal_null(NULL, NULL)', 'true'],
  ['try_add(1, 2)', '3'],
  ['try_subtract(2, 1)', '1'],
  ['try_multiply(2, 3)', '6'],
  ['try_divide(2L, 2L)', '1.0'],
  ['try_divide(1, 0)', 'NULL'],
  ['try_element_at(array(1, 2, 3), 2)', '2'],
  ['try_element_at(array(1, 2, 3), 5)', 'NULL'],
  ["try_to_timestamp('2016-12-31', 'yyyy-MM-dd')", '2016-12-31 00:00:00'],
  ["startswith('Spark SQL', 'Spark')", 'true'],
  ["startswith('Spark SQL', 'SQL')", 'false'],
  ["startswith('Spark SQL', null)", 'NULL'],
  ["endswith('Spark SQL', 'SQL')", 'true'],
  ["endswith('Spark SQL', 'Spark')", 'false'],
  ["contains('Spark SQL', 'Spark')", 'true'],
  ["contains('Spark SQL', 'SPARK')", 'false'],
  ["contains('Spark SQL', null)", 'NULL'],
  ["levenshtein('kitten', 'sitting')", '3'],
  ["levenshtein('kitten', 'sitting', 2)", '-1'],
  ['typeof(1)', 'int'],
  ['typeof(array(1))', 'array<int>'],
  ["typeof(named_struct('a', 1L, 'b', map('k', 1.5)))", 'struct<a:bigint,b:map<string,double>>'],
  ['format_string("Hello World %d %s", 100, "days")', 'Hello World 100 days'],
  ['printf("Hello World %d %s", 100, "days")', 'Hello World 100 days'],
  ["format_string('%05d|%-4s|%.2f|%x|%,d|%%', 42, 'ab', 3.14159, 255, 1234567)", '00042|ab  |3.14|ff|1,234,567|%'],
  ["format_string('%s and %s', 'a', NULL)", 'a and null'],
  ["unbase64('U3BhcmsgU1FM')", 'Spark SQL'],
  ["unhex('537061726B2053514C')", 'Spark SQL'],
  ["unhex('GG')", 'NULL'],
];

describe("Spark's function examples, as Spark prints them", () => {
  const ALL = [...COLLECTION_EXAMPLES, ...DATETIME_EXAMPLES, ...JSON_EXAMPLES, ...MISC_EXAMPLES];

  it.each(ALL)('SELECT %s gives %s', (sql, expected) => {
    expect(printed(sql)).toBe(expected);
  });

  it(`gives the same ${ALL.length} results through session.sql on the executors`, async () => {
    const got: Array<[string, string]> = [];
    for (const [sql] of ALL) got.push([sql, await printedBySql(sql)]);
    expect(got).toEqual(ALL);
  });

  it('VALUES tables and SELECT without FROM run as Spark plans them', async () => {
    const rows = await session().sql("SELECT upper(b) AS u, a * 2 AS twice FROM VALUES (1, 'x'), (2, 'y') AS t(a, b) WHERE a > 1").collect();
    expect(rows).toEqual([{ u: 'Y', twice: 4 }]);
    expect(await session().sql('SELECT explode(array(10, 20))').collect()).toEqual([{ col: 10 }, { col: 20 }]);
    expect(await session().sql('SELECT col1 + col2 AS s FROM VALUES (1, 2.5)').collect()).toEqual([{ s: 3.5 }]);
    expect(() => session().sql('SELECT * FROM VALUES (1, 2), (3)')).toThrow(/NUM_COLUMNS_MISMATCH/);
  });

  it('a pattern with a week-based or unknown letter, and an unknown time zone, fail with their reason', () => {
    expect(() => printed("date_format(DATE '2024-01-01', 'YYYY-ww')")).toThrow(/INVALID_DATETIME_PATTERN.*week-based/);
    expect(() => printed("date_format(DATE '2024-01-01', 'yyyy-MM-dd bb')")).toThrow(/unknown letter 'b'/);
    expect(() => printed("from_utc_timestamp('2016-08-31', 'Mars/Olympus')")).toThrow(/INVALID_TIMEZONE/);
    expect(() => printed("INTERVAL 'soon'")).toThrow(expect.objectContaining({ code: 'INVALID_EXPRESSION' }));
  });

  it('from_json in FAILFAST mode fails on malformed text; a schema that is not DDL names the problem', () => {
    expect(() => printed(`from_json('{"a" 1}', 'a INT', map('mode', 'FAILFAST'))`)).toThrow(expect.objectContaining({ code: 'MALFORMED_RECORD' }));
    expect(printed(`from_json('{"a": 1}', 'a INT', map('mode', 'FAILFAST'))`)).toBe('{"a":1}');
    expect(() => printed(`from_json('{}', 'a NOPE')`)).toThrow(
      expect.objectContaining({ code: 'DATATYPE_MISMATCH', message: expect.stringContaining("unknown type 'NOPE'") }),
    );
    expect(() => printed(`from_json('{}', 'a INT', map('mode', 'DROPMALFORMED'))`)).toThrow(/mode DROPMALFORMED is not supported/);
  });

  it('index 0, a null map key and a repeated map key fail as in Spark', () => {
    expect(() => printed('element_at(array(1, 2, 3), 0)')).toThrow(/INVALID_INDEX_OF_ZERO/);
    expect(() => printed('map(null, 1)')).toThrow(/NULL_MAP_KEY/);
    expect(() => printed("map('a', 1, 'a', 2)")).toThrow(/DUPLICATED_MAP_KEY/);
    expect(() => printed("array_contains('abc', 'a')")).toThrow(expect.objectContaining({ code: 'DATATYPE_MISMATCH' }));
  });
});
