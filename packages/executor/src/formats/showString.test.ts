/**
 * The table of Spark's Dataset.show (showString over ToPrettyString), checked against text that
 * Spark 3.5 prints for the same rows.
 */
import { describe, expect, it } from 'vitest';
import { parseSchema } from '../schema/schema.js';
import { prettyString, showString, showTimestamp } from './showString.js';
import { WINDOW_TYPE, type Schema } from '../schema/types.js';

const ms = (iso: string) => Date.parse(iso);
const lines = (...l: string[]) => l.map((x) => `${x}\n`).join('');

const WINDOWED: Schema = [
  { name: 'window', type: WINDOW_TYPE, nullable: true },
  { name: 'url', type: 'string', nullable: true },
  { name: 'count', type: 'long', nullable: false },
];
const windowRows = [
  { window: { start: ms('2024-06-01T12:00:00Z'), end: ms('2024-06-01T12:30:00Z') }, url: 'https://example.com/a/very/long/path', count: 3 },
  { window: { start: ms('2024-06-01T12:30:00Z'), end: ms('2024-06-01T13:00:00Z') }, url: null, count: 12 },
];

describe('showString', () => {
  it('prints a window as {start, end} in UTC, cuts cells at 20 characters and right-aligns them', () => {
    expect(showString(windowRows, WINDOWED)).toBe(
      lines(
        '+--------------------+--------------------+-----+',
        '|              window|                 url|count|',
        '+--------------------+--------------------+-----+',
        '|{2024-06-01 12:00...|https://example.c...|    3|',
        '|{2024-06-01 12:30...|                NULL|   12|',
        '+--------------------+--------------------+-----+',
      ),
    );
  });

  it('without truncation shows whole cells, left-aligned', () => {
    expect(showString(windowRows, WINDOWED, { truncate: 0 })).toBe(
      lines(
        '+------------------------------------------+------------------------------------+-----+',
        '|window                                    |url                                 |count|',
        '+------------------------------------------+------------------------------------+-----+',
        '|{2024-06-01 12:00:00, 2024-06-01 12:30:00}|https://example.com/a/very/long/path|3    |',
        '|{2024-06-01 12:30:00, 2024-06-01 13:00:00}|NULL                                |12   |',
        '+------------------------------------------+------------------------------------+-----+',
      ),
    );
  });

  it('shows the first numRows rows and says so', () => {
    const schema: Schema = [{ name: 'x', type: 'long', nullable: true }];
    const rows = [{ x: 1 }, { x: 2 }, { x: 3 }];
    expect(showString(rows, schema, { numRows: 2 })).toBe(lines('+---+', '|  x|', '+---+', '|  1|', '|  2|', '+---+', 'only showing top 2 rows'));
    expect(showString(rows, schema, { numRows: 1 })).toBe(lines('+---+', '|  x|', '+---+', '|  1|', '+---+', 'only showing top 1 row'));
    expect(showString(rows, schema, { numRows: 3 })).toBe(lines('+---+', '|  x|', '+---+', '|  1|', '|  2|', '|  3|', '+---+'));
    expect(showString([], schema)).toBe(lines('+---+', '|  x|', '+---+', '+---+'));
  });

  it('keeps an ellipsis off cuts below 4 characters', () => {
    const schema: Schema = [{ name: 's', type: 'string', nullable: true }];
    expect(showString([{ s: 'abcdef' }], schema, { truncate: 3 })).toBe(lines('+---+', '|  s|', '+---+', '|abc|', '+---+'));
    expect(showString([{ s: 'abcdef' }], schema, { truncate: 5 })).toBe(lines('+-----+', '|    s|', '+-----+', '|ab...|', '+-----+'));
  });

  it('escapes line breaks and tabs, and counts full-width characters as two columns', () => {
    const schema: Schema = [{ name: 's', type: 'string', nullable: true }];
    expect(showString([{ s: 'a\nb\tc' }, { s: '日本' }], schema)).toBe(lines('+-------+', '|      s|', '+-------+', '|a\\nb\\tc|', '|   日本|', '+-------+'));
  });
});

describe('prettyString', () => {
  it('prints timestamps with a fraction only when it is not zero', () => {
    expect(showTimestamp(ms('2024-06-01T12:02:00Z'))).toBe('2024-06-01 12:02:00');
    expect(showTimestamp(ms('2024-06-01T12:02:00.500Z'))).toBe('2024-06-01 12:02:00.5');
    expect(showTimestamp(ms('2024-06-01T12:02:00.123Z'))).toBe('2024-06-01 12:02:00.123');
    expect(showTimestamp(ms('1969-12-31T23:59:59.990Z'))).toBe('1969-12-31 23:59:59.99');
    expect(prettyString(new Date('2024-06-01T00:00:01Z'), 'timestamp')).toBe('2024-06-01 00:00:01');
  });

  it('prints structs, arrays and maps as Spark does, NULL inside them too', () => {
    const [s, a, m] = parseSchema('s STRUCT<a: STRING, b: DOUBLE, t: TIMESTAMP>, a ARRAY<LONG>, m MAP<STRING, BOOLEAN>');
    expect(prettyString({ a: 'x', b: 5, t: ms('2024-06-01T12:00:00Z') }, s!.type)).toBe('{x, 5.0, 2024-06-01 12:00:00}');
    expect(prettyString({ a: null, b: 1e7, t: null }, s!.type)).toBe('{NULL, 1.0E7, NULL}');
    expect(prettyString([1, null, 3], a!.type)).toBe('[1, NULL, 3]');
    expect(prettyString([], a!.type)).toBe('[]');
    expect(
      prettyString(
        [
          ['k', true],
          ['j', null],
        ],
        m!.type,
      ),
    ).toBe('{k -> true, j -> NULL}');
    expect(prettyString(null, s!.type)).toBe('NULL');
  });

  it('prints numbers, booleans and dates by their type', () => {
    expect(prettyString(5, 'double')).toBe('5.0');
    expect(prettyString(5, 'long')).toBe('5');
    expect(prettyString(false, 'boolean')).toBe('false');
    expect(prettyString(19875, 'date')).toBe('2024-06-01');
    expect(prettyString(null, 'string')).toBe('NULL');
  });
});
