/**
 * Nexmark's event generator (the model of Flink's and Beam's Nexmark suites), made deterministic:
 * event n of a stream is a pure function of (seed, n), so any offset range replays to the same
 * rows and any split of it generates its events independently.
 *
 *   event n is a person when n % 50 < 1, an auction when n % 50 < 4, else a bid (1 : 3 : 46)
 *   its time is startTimestamp + floor(n * 1e6 / eventsPerSecond) / 1000 ms (event time, not wall time)
 *   its fields come from a random sequence seeded by (seed, n), drawn in the order the reference
 *   generator draws them: hot sellers, bidders and auctions, prices 10^U(0,6) dollars in cents,
 *   auction expiry within twice the time until 100 auctions later, channels and URLs from a
 *   10,000-entry table (half of the bids on four hot channels), and `extra` padding that brings
 *   each event to 200 (person), 500 (auction) or 100 (bid) bytes on average.
 *
 * One difference from the reference: its bid adds FIRST_PERSON_ID to the bidder twice (so bidder
 * ids never match a person's); here a bidder is a person id, as in Beam's generator.
 *
 * Events are generated into column vectors directly: numbers into Float64Arrays, strings as
 * dictionary codes (a fixed dictionary per seed for channels, URLs, names, cities and states).
 */
import type { DataType, Field, Row, Schema } from '../schema/types.js';
import type { ColumnBatch, Vector } from '../columns/vectors.js';

export type NexmarkTable = 'person' | 'auction' | 'bid' | 'all';

export interface NexmarkConfig {
  table: NexmarkTable;
  seed: number;
  eventsPerSecond: number;
  startTimestamp: number;
}

const PERSON_PROPORTION = 1;
const AUCTION_PROPORTION = 3;
const TOTAL_PROPORTION = 50;
const FIRST_AUCTION_ID = 1000;
const FIRST_PERSON_ID = 1000;
const FIRST_CATEGORY_ID = 10;
const NUM_CATEGORIES = 5;
const HOT_RATIO = 100;
const HOT_AUCTION_RATIO = 2;
const HOT_SELLERS_RATIO = 4;
const HOT_BIDDERS_RATIO = 4;
const NUM_IN_FLIGHT_AUCTIONS = 100;
const NUM_ACTIVE_PEOPLE = 1000;
const ID_LEAD = 10;
const AVG_PERSON_BYTES = 200;
const AVG_AUCTION_BYTES = 500;
const AVG_BID_BYTES = 100;
const CHANNELS = 10_000;
const HOT_CHANNELS = ['Google', 'Facebook', 'Baidu', 'Apple'];
const US_STATES = ['AZ', 'CA', 'ID', 'OR', 'WA', 'WY'];
const US_CITIES = ['Phoenix', 'Los Angeles', 'San Francisco', 'Boise', 'Portland', 'Bend', 'Redmond', 'Seattle', 'Kent', 'Cheyenne'];
const FIRST_NAMES = ['Peter', 'Paul', 'Luke', 'John', 'Saul', 'Vicky', 'Kate', 'Julie', 'Sarah', 'Deiter', 'Walter'];
const LAST_NAMES = ['Shultz', 'Abrams', 'Spencer', 'White', 'Bartels', 'Walton', 'Smith', 'Jones', 'Noris'];
const EXTRA_POOL_LENGTH = 1 << 20;

const f = (name: string, type: DataType, nullable = false): Field => ({ name, type, nullable });

export const PERSON_SCHEMA: Schema = [
  f('id', 'long'),
  f('name', 'string'),
  f('emailAddress', 'string'),
  f('creditCard', 'string'),
  f('city', 'string'),
  f('state', 'string'),
  f('dateTime', 'timestamp'),
  f('extra', 'string'),
];
export const AUCTION_SCHEMA: Schema = [
  f('id', 'long'),
  f('itemName', 'string'),
  f('description', 'string'),
  f('initialBid', 'long'),
  f('reserve', 'long'),
  f('dateTime', 'timestamp'),
  f('expires', 'timestamp'),
  f('seller', 'long'),
  f('category', 'long'),
  f('extra', 'string'),
];
export const BID_SCHEMA: Schema = [
  f('auction', 'long'),
  f('bidder', 'long'),
  f('price', 'long'),
  f('channel', 'string'),
  f('url', 'string'),
  f('dateTime', 'timestamp'),
  f('extra', 'string'),
];
/** All three kinds as one stream, as Flink's connector gives them: the other two structs are null. */
export const NEXMARK_ALL_SCHEMA: Schema = [
  f('event_type', 'int'),
  f('person', { struct: PERSON_SCHEMA }, true),
  f('auction', { struct: AUCTION_SCHEMA }, true),
  f('bid', { struct: BID_SCHEMA }, true),
  f('dateTime', 'timestamp'),
];

export function nexmarkSchema(table: NexmarkTable): Schema {
  return { person: PERSON_SCHEMA, auction: AUCTION_SCHEMA, bid: BID_SCHEMA, all: NEXMARK_ALL_SCHEMA }[table];
}

/** 0 person, 1 auction, 2 bid (Flink's event_type). */
export function eventKind(n: number): 0 | 1 | 2 {
  const rem = n % TOTAL_PROPORTION;
  return rem < PERSON_PROPORTION ? 0 : rem < PERSON_PROPORTION + AUCTION_PROPORTION ? 1 : 2;
}

/** The number of events of `kind` among events [0, n). */
export function eventsOfKindBefore(kind: 0 | 1 | 2, n: number): number {
  const per = kind === 0 ? PERSON_PROPORTION : kind === 1 ? AUCTION_PROPORTION : TOTAL_PROPORTION - PERSON_PROPORTION - AUCTION_PROPORTION;
  const lo = kind === 0 ? 0 : kind === 1 ? PERSON_PROPORTION : PERSON_PROPORTION + AUCTION_PROPORTION;
  const epochs = Math.floor(n / TOTAL_PROPORTION);
  const rem = n % TOTAL_PROPORTION;
  return epochs * per + Math.min(per, Math.max(0, rem - lo));
}

export function eventTimestamp(config: Pick<NexmarkConfig, 'eventsPerSecond' | 'startTimestamp'>, n: number): number {
  const delayUs = 1_000_000 / config.eventsPerSecond;
  return config.startTimestamp + Math.floor(Math.trunc(n * delayUs) / 1000);
}

/** A small fast generator (mulberry32), re-seeded for each event from (seed, event number). */
class EventRandom {
  private state = 0;

  seed(seed: number, n: number): void {
    const lo = n >>> 0;
    const hi = Math.floor(n / 4294967296) >>> 0;
    this.state = mix(mix(seed ^ 0x5bd1e995) ^ mix(lo + 0x9e3779b9) ^ mix(hi + 0x7f4a7c15));
  }

  private next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  nextDouble(): number {
    return this.next() / 4294967296;
  }

  /** Uniform integer in [0, bound). */
  nextInt(bound: number): number {
    return Math.floor(this.nextDouble() * bound);
  }
}

function mix(x: number): number {
  let h = x | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** What a seed fixes once: the padding pool, the channel and URL table, the small dictionaries. */
interface SeedTables {
  extraPool: string;
  /** channel i (0-3 hot, 4 + k the k-th channel) and its URL. */
  channels: string[];
  urls: string[];
  names: string[];
}

const seedTables = new Map<number, SeedTables>();

function tablesOf(seed: number): SeedTables {
  let t = seedTables.get(seed);
  if (t) return t;
  const r = new EventRandom();
  r.seed(seed, -1);
  const pool = Buffer.allocUnsafe(EXTRA_POOL_LENGTH);
  for (let i = 0; i < pool.length; i++) pool[i] = 97 + r.nextInt(26);
  const baseUrl = (): string => `https://www.nexmark.com/${nextString(r, 5, '_')}/${nextString(r, 5, '_')}/${nextString(r, 5, '_')}/item.htm?query=1`;
  const channels = [...HOT_CHANNELS];
  const urls = HOT_CHANNELS.map(() => baseUrl());
  for (let i = 0; i < CHANNELS; i++) {
    let url = baseUrl();
    if (r.nextInt(10) > 0) url += `&channel_id=${Math.abs(reverseBits32(i))}`;
    channels.push(`channel-${i}`);
    urls.push(url);
  }
  const names = FIRST_NAMES.flatMap((first) => LAST_NAMES.map((last) => `${first} ${last}`));
  t = { extraPool: pool.toString('latin1'), channels, urls, names };
  seedTables.set(seed, t);
  return t;
}

/** Java's Integer.reverse, as a signed 32-bit value. */
function reverseBits32(i: number): number {
  let x = i >>> 0;
  let out = 0;
  for (let b = 0; b < 32; b++) {
    out = (out << 1) | (x & 1);
    x >>>= 1;
  }
  return out | 0;
}

/** 3 to maxLength - 1 letters, a `special` instead of a letter one time in 13, trimmed. */
function nextString(r: EventRandom, maxLength: number, special = ' '): string {
  let len = 3 + r.nextInt(maxLength - 3);
  let s = '';
  while (len-- > 0) s += r.nextInt(13) === 0 ? special : String.fromCharCode(97 + r.nextInt(26));
  return special === ' ' ? s.trim() : s;
}

/** Padding that brings an event of `currentSize` bytes to `average` on average (±20%). */
function nextExtra(r: EventRandom, pool: string, currentSize: number, average: number): string {
  if (currentSize > average) return '';
  const desired = average - currentSize;
  const delta = Math.round(desired * 0.2);
  const size = desired - delta + (delta === 0 ? 0 : r.nextInt(2 * delta));
  const offset = r.nextInt(pool.length - size);
  return pool.substring(offset, offset + size);
}

function lastBase0PersonId(n: number): number {
  const epoch = Math.floor(n / TOTAL_PROPORTION);
  let offset = n % TOTAL_PROPORTION;
  if (offset >= PERSON_PROPORTION) offset = PERSON_PROPORTION - 1;
  return epoch * PERSON_PROPORTION + offset;
}

function lastBase0AuctionId(n: number): number {
  let epoch = Math.floor(n / TOTAL_PROPORTION);
  let offset = n % TOTAL_PROPORTION;
  if (offset < PERSON_PROPORTION) {
    epoch--;
    offset = AUCTION_PROPORTION - 1;
  } else if (offset >= PERSON_PROPORTION + AUCTION_PROPORTION) offset = AUCTION_PROPORTION - 1;
  else offset -= PERSON_PROPORTION;
  return epoch * AUCTION_PROPORTION + offset;
}

/** A random person among the active ones, or a few ids ahead of the last (a person "not yet seen"). */
function nextBase0PersonId(r: EventRandom, n: number): number {
  const numPeople = lastBase0PersonId(n) + 1;
  const active = Math.min(numPeople, NUM_ACTIVE_PEOPLE);
  return numPeople - active + r.nextInt(active + ID_LEAD);
}

function nextBase0AuctionId(r: EventRandom, n: number): number {
  const max = lastBase0AuctionId(n);
  const min = Math.max(max - NUM_IN_FLIGHT_AUCTIONS, 0);
  return min + r.nextInt(max - min + 1 + ID_LEAD);
}

function nextPrice(r: EventRandom): number {
  return Math.round(10 ** (r.nextDouble() * 6) * 100);
}

/** Columns of one kind, filled row by row. */
class Columns {
  readonly nums = new Map<string, Float64Array>();
  readonly strs = new Map<string, { codes: Int32Array; dict: string[] }>();

  constructor(
    private readonly schema: Schema,
    capacity: number,
    fixed: Record<string, string[]>,
  ) {
    for (const field of schema) {
      if (field.type === 'string') this.strs.set(field.name, { codes: new Int32Array(capacity), dict: fixed[field.name] ?? [] });
      else this.nums.set(field.name, new Float64Array(capacity));
    }
  }

  num(name: string): Float64Array {
    return this.nums.get(name) as Float64Array;
  }

  code(name: string): Int32Array {
    return this.strs.get(name)!.codes;
  }

  /** Sets row i of a column without a fixed dictionary to a new dictionary entry. */
  add(name: string, i: number, value: string): void {
    const s = this.strs.get(name)!;
    s.codes[i] = s.dict.length;
    s.dict.push(value);
  }

  batch(length: number): ColumnBatch {
    const columns = new Map<string, Vector>();
    for (const field of this.schema) {
      const s = this.strs.get(field.name);
      columns.set(
        field.name,
        s
          ? { kind: 'str', length, dict: s.dict, codes: s.codes.subarray(0, length), nulls: null }
          : { kind: 'num', length, values: this.num(field.name).subarray(0, length), nulls: null },
      );
    }
    return { length, columns };
  }
}

/** Generates events [start, end) of one stream into column batches of at most `chunk` rows. */
export class NexmarkGenerator {
  private readonly r = new EventRandom();
  private readonly tables: SeedTables;

  constructor(private readonly config: NexmarkConfig) {
    this.tables = tablesOf(config.seed);
  }

  /** Calls fn for each chunk; returns the number of rows (events of the table's kind). */
  forEachBatch(start: number, end: number, chunk: number, fn: (batch: ColumnBatch) => void): number {
    const table = this.config.table;
    if (table === 'all') {
      let total = 0;
      for (let lo = start; lo < end; lo += chunk) {
        const hi = Math.min(end, lo + chunk);
        const rows = this.rows(lo, hi);
        total += rows.length;
        fn(allBatch(rows));
      }
      return total;
    }
    const kind = table === 'person' ? 0 : table === 'auction' ? 1 : 2;
    let total = 0;
    let n = start;
    while (n < end) {
      const cols = this.columnsOf(kind, chunk);
      let i = 0;
      for (; n < end && i < chunk; n++) {
        if (eventKind(n) !== kind) continue;
        this.fill(kind, cols, i++, n);
      }
      if (i > 0) fn(cols.batch(i));
      total += i;
    }
    return total;
  }

  /** Events [start, end) as engine rows of the table's schema. */
  rows(start: number, end: number): Row[] {
    const out: Row[] = [];
    const table = this.config.table;
    const one = { person: this.columnsOf(0, 1), auction: this.columnsOf(1, 1), bid: this.columnsOf(2, 1) };
    for (let n = start; n < end; n++) {
      const kind = eventKind(n);
      const name = kind === 0 ? 'person' : kind === 1 ? 'auction' : 'bid';
      if (table !== 'all' && table !== name) continue;
      const cols = one[name];
      this.fill(kind, cols, 0, n);
      const row = rowOf(cols, nexmarkSchema(name));
      out.push(table === 'all' ? { event_type: kind, person: null, auction: null, bid: null, [name]: row, dateTime: row.dateTime } : row);
    }
    return out;
  }

  private columnsOf(kind: 0 | 1 | 2, capacity: number): Columns {
    const t = this.tables;
    if (kind === 0) return new Columns(PERSON_SCHEMA, capacity, { name: t.names, city: US_CITIES, state: US_STATES });
    if (kind === 1) return new Columns(AUCTION_SCHEMA, capacity, {});
    return new Columns(BID_SCHEMA, capacity, { channel: t.channels, url: t.urls });
  }

  private fill(kind: 0 | 1 | 2, cols: Columns, i: number, n: number): void {
    const r = this.r;
    r.seed(this.config.seed, n);
    const ts = eventTimestamp(this.config, n);
    const pool = this.tables.extraPool;
    if (kind === 0) {
      cols.num('id')[i] = lastBase0PersonId(n) + FIRST_PERSON_ID;
      const name = r.nextInt(FIRST_NAMES.length) * LAST_NAMES.length + r.nextInt(LAST_NAMES.length);
      cols.code('name')[i] = name;
      const email = `${nextString(r, 7)}@${nextString(r, 5)}.com`;
      cols.add('emailAddress', i, email);
      let card = '';
      for (let k = 0; k < 4; k++) card += (k > 0 ? ' ' : '') + String(r.nextInt(10000)).padStart(4, '0');
      cols.add('creditCard', i, card);
      const city = r.nextInt(US_CITIES.length);
      cols.code('city')[i] = city;
      const state = r.nextInt(US_STATES.length);
      cols.code('state')[i] = state;
      cols.num('dateTime')[i] = ts;
      const size = 8 + (this.tables.names[name] as string).length + email.length + card.length + (US_CITIES[city] as string).length + 2;
      cols.add('extra', i, nextExtra(r, pool, size, AVG_PERSON_BYTES));
    } else if (kind === 1) {
      cols.num('id')[i] = lastBase0AuctionId(n) + FIRST_AUCTION_ID;
      const seller = r.nextInt(HOT_SELLERS_RATIO) > 0 ? Math.floor(lastBase0PersonId(n) / HOT_RATIO) * HOT_RATIO : nextBase0PersonId(r, n);
      cols.num('seller')[i] = seller + FIRST_PERSON_ID;
      cols.num('category')[i] = FIRST_CATEGORY_ID + r.nextInt(NUM_CATEGORIES);
      const initialBid = nextPrice(r);
      cols.num('initialBid')[i] = initialBid;
      // Expiry: on average the time until NUM_IN_FLIGHT_AUCTIONS auctions later.
      const horizon = eventTimestamp(this.config, n + Math.floor((NUM_IN_FLIGHT_AUCTIONS * TOTAL_PROPORTION) / AUCTION_PROPORTION)) - ts;
      cols.num('expires')[i] = ts + 1 + r.nextInt(Math.max(horizon * 2, 1));
      const itemName = nextString(r, 20);
      cols.add('itemName', i, itemName);
      const description = nextString(r, 100);
      cols.add('description', i, description);
      cols.num('reserve')[i] = initialBid + nextPrice(r);
      cols.num('dateTime')[i] = ts;
      cols.add('extra', i, nextExtra(r, pool, 48 + itemName.length + description.length, AVG_AUCTION_BYTES));
    } else {
      const auction = r.nextInt(HOT_AUCTION_RATIO) > 0 ? Math.floor(lastBase0AuctionId(n) / HOT_RATIO) * HOT_RATIO : nextBase0AuctionId(r, n);
      cols.num('auction')[i] = auction + FIRST_AUCTION_ID;
      const bidder = r.nextInt(HOT_BIDDERS_RATIO) > 0 ? Math.floor(lastBase0PersonId(n) / HOT_RATIO) * HOT_RATIO + 1 : nextBase0PersonId(r, n);
      cols.num('bidder')[i] = bidder + FIRST_PERSON_ID;
      cols.num('price')[i] = nextPrice(r);
      const channel = r.nextInt(2) > 0 ? r.nextInt(HOT_CHANNELS.length) : HOT_CHANNELS.length + r.nextInt(CHANNELS);
      cols.code('channel')[i] = channel;
      cols.code('url')[i] = channel;
      cols.num('dateTime')[i] = ts;
      cols.add('extra', i, nextExtra(r, pool, 32, AVG_BID_BYTES));
    }
  }
}

function rowOf(cols: Columns, schema: Schema): Row {
  const row: Row = {};
  for (const field of schema) {
    const s = cols.strs.get(field.name);
    row[field.name] = s ? s.dict[s.codes[0] as number] : cols.num(field.name)[0];
  }
  return row;
}

function allBatch(rows: Row[]): ColumnBatch {
  const length = rows.length;
  const eventType = new Float64Array(length);
  const dateTime = new Float64Array(length);
  const structs = { person: new Array<unknown>(length), auction: new Array<unknown>(length), bid: new Array<unknown>(length) };
  rows.forEach((row, i) => {
    eventType[i] = row.event_type as number;
    dateTime[i] = row.dateTime as number;
    for (const k of ['person', 'auction', 'bid'] as const) structs[k][i] = row[k];
  });
  const columns = new Map<string, Vector>([
    ['event_type', { kind: 'num', length, values: eventType, nulls: null }],
    ['person', { kind: 'any', length, values: structs.person }],
    ['auction', { kind: 'any', length, values: structs.auction }],
    ['bid', { kind: 'any', length, values: structs.bid }],
    ['dateTime', { kind: 'num', length, values: dateTime, nulls: null }],
  ]);
  return { length, columns };
}
