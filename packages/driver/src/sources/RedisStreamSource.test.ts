import { describe, expect, it } from 'vitest';
import { prorate } from './RedisStreamSource.js';

describe("prorate (Spark's Kafka rate limit)", () => {
  const shares = (cap: number, backlog: Record<string, number>) => Object.fromEntries(prorate(cap, new Map(Object.entries(backlog))));

  it('splits the cap by whole backlogs, rounding down', () => {
    expect(shares(100, { a: 300, b: 100 })).toEqual({ a: 75, b: 25 });
    expect(shares(100, { a: 225, b: 75 })).toEqual({ a: 75, b: 25 });
    expect(shares(10, { a: 7, b: 7, c: 7 })).toEqual({ a: 3, b: 3, c: 3 });
  });

  it('never starves a small stream, and never takes more than a backlog', () => {
    expect(shares(100, { a: 10_000, b: 1 })).toEqual({ a: 99, b: 1 });
    expect(shares(100, { a: 30, b: 20 })).toEqual({ a: 30, b: 20 });
    expect(shares(100, { a: 0, b: 5 })).toEqual({ b: 5 });
  });
});
