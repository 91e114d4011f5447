import { describe, expect, it } from 'vitest';
import { parseIsoTimestamp, parseTimestamp, parseTimestampText } from './timestamps.js';

// Forms on both sides of the fast path's edge: every one the fast path takes must mean the same
// to the whole grammar, and what it leaves goes to the grammar.
const CORPUS = [
  '2024-01-02',
  '2024-01-02T03:04',
  '2024-01-02 03:04:05',
  '2024-01-02t03:04:05z',
  '2024-01-02T03:04:05.6Z',
  '2024-01-02T03:04:05.678999Z',
  '2024-01-02T03:04:05.123456789Z',
  '2024-01-02T03:04:05.1234567891Z',
  '2024-01-02T05:04:05.678+02:00',
  '2024-01-02T00:34:05.678-0230',
  '2024-01-02T03:04:05+05',
  '2024-01-02T03:04:05+19:00',
  '2024-01-02T03:04:05+02:60',
  '2024-01-02T03:04:05,678Z',
  '2024-02-29',
  '2023-02-29',
  '2024-13-01',
  '2024-01-02T24:00',
  '1969-12-31T23:59:59.999Z',
  '0001-01-01T00:00:00Z',
  ' 2024-01-02 ',
  '2024-1-2',
  '2024-01-02 03:04:05 UTC',
  '2024',
  'tomorrow',
  '',
];

describe('one timestamp grammar for casts and readers', () => {
  it.each(CORPUS)('%j: the fast path agrees with the grammar wherever it answers', (s) => {
    const fast = parseIsoTimestamp(s);
    const grammar = parseTimestamp(s);
    if (!Number.isNaN(fast)) expect(fast).toBe(grammar);
    expect(parseTimestampText(s)).toBe(grammar ?? NaN);
  });

  it('the grammar takes what Spark casts take, beyond the fast path', () => {
    expect(parseTimestampText('2024-1-2')).toBe(Date.UTC(2024, 0, 2));
    expect(parseTimestampText('2024')).toBe(Date.UTC(2024, 0, 1));
    expect(parseTimestampText(' 2024-01-02 03:04:05 UTC ')).toBe(Date.UTC(2024, 0, 2, 3, 4, 5));
    expect(parseTimestampText('2024-01-02T03:04:05+19:00')).toBeNaN();
    expect(parseTimestampText('2024-01-02T03:04:05,678Z')).toBeNaN();
  });
});
