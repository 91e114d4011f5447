/** DATE, ARRAY and MAP through schemas, casts, converters, state keys and the file formats. */
import { describe, expect, it } from 'vitest';
import { decodeKey, encodeKey } from '@sluice/state';
import { dataTypeToDDL, parseDataType, parseSchema, schemaToDDL } from './schema.js';
import { createCast, rowToExternal, rowToInternal, typeName } from './values.js';
import { formatDate, parseDate } from './timestamps.js';
import { parseRecords } from '../formats/readers.js';
import { formatRecords } from '../formats/writers.js';
import { kDefaultReadOptions, kDefaultWriteOptions } from '../formats/options.js';
import type { DataType } from './types.js';

const day = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / 86_400_000;
const cast = (from: DataType, to: DataType, v: unknown): unknown => createCast(from, to)!(v);

describe('DDL', () => {
  it('reads DATE, ARRAY<...> and MAP<..., ...>, nested, and prints them back', () => {
    expect(parseDataType('date')).toBe('date');
    expect(parseDataType('array<int>')).toEqual({ array: 'int' });
    expect(parseDataType('MAP<STRING, ARRAY<BIGINT>>')).toEqual({ map: { key: 'string', value: { array: 'long' } } });
    const schema = parseSchema('d DATE, tags ARRAY<STRING>, m MAP<STRING, INT>, s STRUCT<xs: ARRAY<STRUCT<a: INT>>>');
    expect(schemaToDDL(schema)).toBe('d DATE, tags ARRAY<STRING>, m MAP<STRING, INT>, s STRUCT<xs: ARRAY<STRUCT<a: INT>>>');
    expect(parseSchema(schemaToDDL(schema))).toEqual(schema);
    expect(dataTypeToDDL({ array: { map: { key: 'int', value: 'date' } } })).toBe('ARRAY<MAP<INT, DATE>>');
    expect(typeName({ map: { key: 'string', value: { array: 'long' } } })).toBe('MAP<STRING, ARRAY<BIGINT>>');
  });

  it('takes the field-list form and refuses a malformed type, naming the column', () => {
    expect(parseSchema([{ name: 'xs', type: { array: 'int' }, nullable: true }])).toEqual([{ name: 'xs', type: { array: 'int' }, nullable: true }]);
    expect(() => parseSchema('xs ARRAY<INT')).toThrow(expect.objectContaining({ code: 'INVALID_SCHEMA' }));
    expect(() => parseSchema('m MAP<STRING>')).toThrow(/expected ','/);
  });
});

describe('DATE values', () => {
  it("parses Spark's date text forms and prints yyyy-MM-dd", () => {
    expect(parseDate('2024-03-05')).toBe(day('2024-03-05'));
    expect(parseDate('2024-3-5')).toBe(day('2024-03-05'));
    expect(parseDate('2024-03')).toBe(day('2024-03-01'));
    expect(parseDate('2024')).toBe(day('2024-01-01'));
    expect(parseDate(' 2024-03-05 12:34:56 ')).toBe(day('2024-03-05'));
    expect(parseDate('2024-03-05T23:59')).toBe(day('2024-03-05'));
    expect(parseDate('2023-02-29')).toBeNull();
    expect(parseDate('2024-13-01')).toBeNull();
    expect(parseDate('abc')).toBeNull();
    expect(formatDate(day('1969-12-31'))).toBe('1969-12-31');
    expect(formatDate(day('0001-01-01'))).toBe('0001-01-01');
  });

  it('casts as Spark does: with STRING and TIMESTAMP, not with numbers', () => {
    expect(cast('string', 'date', '2024-02-29')).toBe(day('2024-02-29'));
    expect(cast('date', 'string', day('2024-02-29'))).toBe('2024-02-29');
    expect(cast('timestamp', 'date', Date.parse('2024-02-29T23:59:59Z'))).toBe(day('2024-02-29'));
    expect(cast('timestamp', 'date', Date.parse('1969-12-31T23:59:59Z'))).toBe(day('1969-12-31'));
    expect(cast('date', 'timestamp', day('2024-02-29'))).toBe(Date.parse('2024-02-29T00:00:00Z'));
    expect(createCast('int', 'date')).toBeUndefined();
    expect(createCast('date', 'long')).toBeUndefined();
  });

  it('reaches JavaScript as a Date at UTC midnight, and comes back from a Date or text', () => {
    const schema = parseSchema('d DATE');
    expect(rowToExternal({ d: day('2024-05-06') }, schema)).toEqual({ d: new Date('2024-05-06T00:00:00Z') });
    expect(rowToInternal({ d: new Date('2024-05-06T18:00:00Z') }, schema)).toEqual({ d: day('2024-05-06') });
    expect(rowToInternal({ d: '2024-05-06' }, schema)).toEqual({ d: day('2024-05-06') });
  });
});

describe('ARRAY and MAP values', () => {
  const arr: DataType = { array: 'int' };
  const map: DataType = { map: { key: 'string', value: 'double' } };

  it('print as Spark prints them when cast to STRING', () => {
    expect(cast(arr, 'string', [1, null, 3])).toBe('[1, null, 3]');
    expect(cast({ array: 'string' }, 'string', [])).toBe('[]');
    expect(
      cast(map, 'string', [
        ['a', 1],
        ['b', null],
      ]),
    ).toBe('{a -> 1.0, b -> null}');
    expect(cast({ array: { array: 'date' } }, 'string', [[day('2024-01-01')]])).toBe('[[2024-01-01]]');
  });

  it('cast element by element', () => {
    expect(cast({ array: 'string' }, arr, ['1', 'x', null])).toEqual([1, null, null]);
    expect(cast(map, { map: { key: 'string', value: 'string' } }, [['a', 1.5]])).toEqual([['a', '1.5']]);
    expect(createCast(arr, 'int')).toBeUndefined();
    expect(createCast(arr, map)).toBeUndefined();
  });

  it('reach JavaScript as an array and a Map, and come back from an array, a Map or an object', () => {
    const schema = parseSchema('xs ARRAY<TIMESTAMP>, m MAP<STRING, INT>');
    const t = Date.parse('2024-01-01T00:00:00Z');
    const ext = rowToExternal({ xs: [t, null], m: [['a', 1]] }, schema);
    expect(ext).toEqual({ xs: [new Date(t), null], m: new Map([['a', 1]]) });
    expect(rowToInternal(ext, schema)).toEqual({ xs: [t, null], m: [['a', 1]] });
    expect(rowToInternal({ xs: 'nope', m: { a: '2', b: 'x' } }, schema)).toEqual({
      xs: null,
      m: [
        ['a', 2],
        ['b', null],
      ],
    });
  });

  it('are state keys: equal arrays encode alike, and decode to the same value', () => {
    const types = [{ array: 'string' as const }, { array: { array: 'int' as const } }];
    const k = encodeKey(
      [
        ['a', 'bc'],
        [[1], []],
      ],
      types,
    );
    expect(decodeKey(k, types)).toEqual([
      ['a', 'bc'],
      [[1], []],
    ]);
    expect(
      encodeKey(
        [
          ['a', 'bc'],
          [[1], []],
        ],
        types,
      ),
    ).toEqual(k);
    expect(
      encodeKey(
        [
          ['ab', 'c'],
          [[1], []],
        ],
        types,
      ),
    ).not.toEqual(k);
    expect(encodeKey([['a'], [[1, 0]]], types)).not.toEqual(encodeKey([['a'], [[1], [0]]], types));
  });
});

describe('file formats', () => {
  const schema = parseSchema('d DATE, xs ARRAY<INT>, m MAP<STRING, ARRAY<STRING>>, s STRUCT<ds: ARRAY<DATE>>');
  const row = { d: day('2024-01-02'), xs: [1, null, 3], m: [['k', ['a', null]]], s: { ds: [day('2000-02-29')] } };

  it('JSON writes dates as text, arrays and maps as JSON, and reads them back', () => {
    const text = formatRecords('json', [row], schema, kDefaultWriteOptions);
    expect(text).toBe('{"d":"2024-01-02","xs":[1,null,3],"m":{"k":["a",null]},"s":{"ds":["2000-02-29"]}}\n');
    expect(parseRecords('json', text, schema, kDefaultReadOptions, 'f.json')).toEqual([row]);
  });

  it('JSON marks a value of the wrong shape malformed, and PERMISSIVE keeps the row', () => {
    const rows = parseRecords('json', '{"d":"2024-01-02","xs":[1,"x"],"m":[]}\n', schema, kDefaultReadOptions, 'f.json');
    expect(rows).toEqual([{ d: day('2024-01-02'), xs: null, m: null, s: null }]);
  });

  it('CSV holds arrays and maps as their JSON text and dates as yyyy-MM-dd', () => {
    const text = formatRecords('csv', [row], schema, { ...kDefaultWriteOptions, header: false });
    expect(text).toBe('2024-01-02,"[1,null,3]","{""k"":[""a"",null]}","{""ds"":[""2000-02-29""]}"\n');
    expect(parseRecords('csv', text, schema, kDefaultReadOptions, 'f.csv')).toEqual([row]);
  });
});

describe('timestampFormat and dateFormat', () => {
  const schema = parseSchema('t TIMESTAMP, d DATE');
  const opts = { ...kDefaultReadOptions, timestampFormat: 'dd/MM/yyyy HH:mm', dateFormat: 'MM/dd/yyyy' };

  it('read TIMESTAMP and DATE text by their patterns in JSON and CSV, and text of another form is malformed', () => {
    const want = [{ t: Date.UTC(2015, 7, 26, 13, 5), d: day('2015-12-31') }];
    expect(parseRecords('json', '{"t":"26/08/2015 13:05","d":"12/31/2015"}\n', schema, opts, 'f.json')).toEqual(want);
    expect(parseRecords('csv', '26/08/2015 13:05,12/31/2015\n', schema, opts, 'f.csv')).toEqual(want);
    expect(parseRecords('json', '{"t":"2015-08-26T13:05:00Z","d":"2015-12-31"}\n', schema, opts, 'f.json')).toEqual([{ t: null, d: null }]);
    // Without the options, CAST's grammar.
    expect(parseRecords('json', '{"t":"2015-08-26T13:05:00Z","d":"2015-12-31"}\n', schema, kDefaultReadOptions, 'f.json')).toEqual([
      { t: Date.UTC(2015, 7, 26, 13, 5), d: day('2015-12-31') },
    ]);
  });
});
