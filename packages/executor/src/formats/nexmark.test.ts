import { describe, expect, it } from 'vitest';
import { valueAt } from '../columns/vectors.js';
import { eventKind, eventsOfKindBefore, eventTimestamp, NexmarkGenerator, nexmarkSchema, type NexmarkConfig, type NexmarkTable } from './nexmark.js';
import type { Row } from '../schema/types.js';

const config = (table: NexmarkTable, seed = 7): NexmarkConfig => ({ table, seed, eventsPerSecond: 1000, startTimestamp: 1_000_000 });

/** Rows of the column batches the generator gives for [start, end), in chunks of `chunk`. */
function columnRows(table: NexmarkTable, start: number, end: number, chunk: number, seed = 7): Row[] {
  const rows: Row[] = [];
  const schema = nexmarkSchema(table);
  new NexmarkGenerator(config(table, seed)).forEachBatch(start, end, chunk, (batch) => {
    for (let i = 0; i < batch.length; i++) rows.push(Object.fromEntries(schema.map((f) => [f.name, valueAt(batch.columns.get(f.name)!, i)])));
  });
  return rows;
}

describe('the nexmark generator', () => {
  it('makes 1 person, 3 auctions and 46 bids in every 50 events, and counts them', () => {
    const kinds = Array.from({ length: 100 }, (_, n) => eventKind(n));
    expect(kinds.slice(0, 50).filter((k) => k === 0)).toHaveLength(1);
    expect(kinds.slice(0, 50).filter((k) => k === 1)).toHaveLength(3);
    expect(kinds.slice(50).filter((k) => k === 2)).toHaveLength(46);
    for (const n of [0, 1, 3, 4, 49, 50, 123]) {
      for (const kind of [0, 1, 2] as const)
        expect(eventsOfKindBefore(kind, n)).toBe(
          kinds
            .concat(Array.from({ length: 100 }, (_, i) => eventKind(100 + i)))
            .slice(0, n)
            .filter((k) => k === kind).length,
        );
    }
  });

  it('gives event n the same fields whatever range or chunk generates it (a replay reads the same rows)', () => {
    for (const table of ['person', 'auction', 'bid'] as const) {
      const whole = columnRows(table, 0, 5000, 1 << 16);
      expect(columnRows(table, 0, 2345, 100).concat(columnRows(table, 2345, 5000, 777))).toEqual(whole);
      expect(new NexmarkGenerator(config(table)).rows(0, 5000)).toEqual(whole);
      expect(columnRows(table, 0, 5000, 1 << 16, 8)).not.toEqual(whole);
    }
  });

  it('numbers people and auctions from 1000 in order, and stamps event n at start + n / eventsPerSecond', () => {
    const people = columnRows('person', 0, 5000, 1000);
    expect(people.map((p) => p.id)).toEqual(Array.from({ length: 100 }, (_, i) => 1000 + i));
    const auctions = columnRows('auction', 0, 5000, 1000);
    expect(auctions.map((a) => a.id)).toEqual(Array.from({ length: 300 }, (_, i) => 1000 + i));
    expect(people[3]!.dateTime).toBe(eventTimestamp(config('person'), 150));
    expect(eventTimestamp(config('bid'), 1500)).toBe(1_000_000 + 1500);
    for (const a of auctions) {
      expect(a.expires as number).toBeGreaterThan(a.dateTime as number);
      expect(a.reserve as number).toBeGreaterThan(a.initialBid as number);
      expect([10, 11, 12, 13, 14]).toContain(a.category);
      expect(a.seller as number).toBeGreaterThanOrEqual(1000);
    }
  });

  it('makes bids for recent auctions by recent people, half of them on the hot channels, with the padding that sizes events', () => {
    const n = 50_000;
    const bids = columnRows('bid', 0, n, 1 << 16);
    expect(bids).toHaveLength(46_000);
    const hot = bids.filter((b) => ['Google', 'Facebook', 'Baidu', 'Apple'].includes(b.channel as string)).length / bids.length;
    expect(hot).toBeGreaterThan(0.45);
    expect(hot).toBeLessThan(0.55);
    const lastAuction = 1000 + eventsOfKindBefore(1, n);
    const lastPerson = 1000 + eventsOfKindBefore(0, n);
    const url = /^https:\/\/www\.nexmark\.com\/[^/]+\/[^/]+\/[^/]+\/item\.htm\?query=1/;
    expect(bids.filter((b) => (b.auction as number) >= lastAuction + 10 || (b.bidder as number) >= lastPerson + 10 || !url.test(b.url as string))).toEqual([]);
    const mean = (rows: Row[]): number => rows.reduce((s, r) => s + (r.extra as string).length, 0) / rows.length;
    // Extra brings a bid to about 100 bytes: 32 of fields and 68 on average of padding.
    expect(mean(bids)).toBeGreaterThan(63);
    expect(mean(bids)).toBeLessThan(73);
    expect(new Set(bids.map((b) => b.channel)).size).toBeGreaterThan(1000);
  });

  it("gives all three kinds as one stream with Flink's event_type and structs", () => {
    const all = new NexmarkGenerator(config('all')).rows(0, 50);
    expect(all.map((r) => r.event_type)).toEqual(Array.from({ length: 50 }, (_, n) => eventKind(n)));
    expect(all[0]!.person).toEqual(columnRows('person', 0, 1, 1)[0]);
    expect(all[0]!.bid).toBeNull();
    expect(all[5]!.bid).toEqual(columnRows('bid', 5, 6, 1)[0]);
    expect(all[5]!.dateTime).toBe(eventTimestamp(config('all'), 5));
    const chunked: Row[] = [];
    new NexmarkGenerator(config('all')).forEachBatch(0, 50, 20, (b) => {
      for (let i = 0; i < b.length; i++) chunked.push(Object.fromEntries(nexmarkSchema('all').map((f) => [f.name, valueAt(b.columns.get(f.name)!, i)])));
    });
    expect(chunked).toEqual(all);
  });
});
