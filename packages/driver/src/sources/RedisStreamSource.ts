/**
 * `readStream.format('redis')`: Redis Streams as a replayable source, the way Spark's Kafka
 * source reads topics. An offset is, per stream, the id of the last entry a batch read ("0-0":
 * none); a batch reads `XRANGE stream (start end` on the driver, so a replay reads exactly the same
 * entries. `maxOffsetsPerTrigger` caps a batch's entries across streams, prorated by each
 * stream's backlog (prorate). Entries trimmed before they were read (`XTRIM`, `MAXLEN`, `XDEL`) show as
 * `max-deleted-entry-id` past the start in `XINFO STREAM`: with failOnDataLoss (the default) that
 * is REDIS_DATA_LOSS naming the stream and the range, else a warning, counted in the source's
 * progress metrics.
 */
import type { Redis } from 'ioredis';

/** Loaded on first use, as SQLite is: most sessions never read Redis. */
const ioredis = (): typeof import('ioredis') => requireOptional<typeof import('ioredis')>('ioredis', "format('redis')", 'format');
import { requireOptional } from '../optionalDependency.js';
import { encodeRows, parseDate, type InputSplit, type Row, type Schema } from '@sluice/executor';
import { SluiceError, warn } from '@sluice/state';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';
import { readVersioned, writeVersioned } from '../checkpoint/versionedFile.js';
import { existsSync } from 'node:fs';
import type { ReadLimit, StreamSource } from './Source.js';

export interface RedisSourceConfig {
  url: string;
  streams: string[];
  /** 'earliest', 'latest', or an id per stream. */
  startingOffsets: 'earliest' | 'latest' | Record<string, string>;
  maxOffsetsPerTrigger?: number;
  failOnDataLoss: boolean;
}

/** The columns of a Redis entry: its stream, id, the time in its id, and its fields as JSON text. */
export const REDIS_SCHEMA: Schema = [
  { name: 'stream', type: 'string', nullable: false },
  { name: 'id', type: 'string', nullable: false },
  { name: 'timestamp', type: 'timestamp', nullable: false },
  { name: 'fields', type: 'string', nullable: false },
];

/** The types an entry's field (a string in Redis) can be read as, with a declared schema. */
export const REDIS_FIELD_TYPES: readonly string[] = ['string', 'long', 'int', 'double', 'boolean', 'timestamp', 'date'];

/** A field's string as a value of `type`; null when it is missing or does not parse. */
function fieldValue(raw: string | undefined, type: string): unknown {
  if (raw === undefined) return null;
  switch (type) {
    case 'string':
      return raw;
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : null;
    case 'timestamp': {
      const ms = /^-?\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
      return Number.isNaN(ms) ? null : ms;
    }
    case 'date':
      return parseDate(raw);
    default: {
      const n = Number(raw);
      if (raw.trim() === '' || Number.isNaN(n)) return null;
      return type === 'double' ? n : Number.isInteger(n) ? n : null;
    }
  }
}

/**
 * Per stream, the id of the last entry read; under `#`, that entry's ordinal (how many entries the
 * stream had received up to it), which tells trimmed entries from read ones.
 */
interface Offsets {
  [stream: string]: string | Record<string, number> | undefined;
  '#'?: Record<string, number>;
}

const ordinalOf = (o: Offsets, stream: string): number | undefined => o['#']?.[stream];
const idOf = (o: Offsets, stream: string): string => {
  const id = o[stream];
  return typeof id === 'string' ? id : '0-0';
};

/** Redis stream ids compare by milliseconds, then sequence. */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am !== bm ? am - bm : (as ?? 0) - (bs ?? 0);
}

function connectionError(url: string, e: unknown): SluiceError {
  return new SluiceError('REDIS_CONNECTION_FAILED', `cannot reach Redis at ${url}: ${(e as Error)?.message ?? String(e)}`, { option: 'url', cause: e });
}

/**
 * A client that fails fast at start (no retries, no queue), or, while running, queues commands
 * while it reconnects with backoff, and fails them once `retries` reconnections failed.
 */
function client(url: string, retries: number): Redis {
  return new (ioredis().Redis)(url, {
    lazyConnect: true,
    enableOfflineQueue: retries > 0,
    maxRetriesPerRequest: retries,
    retryStrategy: (times) => (times > retries ? null : Math.min(50 * 2 ** times, 2000)),
  });
}

/**
 * Checks at `start()`: the server answers, and every stream exists and is a stream (coded errors
 * REDIS_CONNECTION_FAILED, REDIS_STREAM_NOT_FOUND, REDIS_WRONG_TYPE).
 */
export async function checkRedisSource(config: RedisSourceConfig): Promise<void> {
  const redis = client(config.url, 0);
  redis.on('error', () => {});
  try {
    await redis.connect().catch((e: unknown) => {
      throw connectionError(config.url, e);
    });
    for (const s of config.streams) {
      const type = await redis.type(s);
      if (type === 'none') throw new SluiceError('REDIS_STREAM_NOT_FOUND', `Redis at ${config.url} has no stream ${s}`, { option: 'stream' });
      if (type !== 'stream') throw new SluiceError('REDIS_WRONG_TYPE', `Redis key ${s} at ${config.url} is a ${type}, not a stream`, { option: 'stream' });
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * Spark's Kafka rate limit (KafkaMicroBatchStream.rateLimit): each stream takes the cap in
 * proportion to its backlog, rounded down, but a stream with a backlog below one entry's share
 * still takes one (so a small stream is never starved), and never more than its backlog.
 */
export function prorate(cap: number, backlog: ReadonlyMap<string, number>): Map<string, number> {
  const total = [...backlog.values()].reduce((n, b) => n + b, 0);
  const shares = new Map<string, number>();
  for (const [s, size] of backlog) {
    if (size <= 0) continue;
    const x = (cap * size) / total;
    shares.set(s, Math.min(size, x < 1 ? Math.ceil(x) : Math.floor(x)));
  }
  return shares;
}

export class RedisStreamSource implements StreamSource {
  readonly description: string;
  private readonly redis: Redis;
  private initial: Offsets | undefined;
  /** Trigger.AvailableNow: the last ids at the first trigger; no batch reads past them. */
  private pinAtFirstTrigger = false;
  private pinned: Record<string, { lastId: string; added: number }> | undefined;
  /**
   * The entries the last latestOffset read past each stream's start: the batch it plans reads
   * them from here rather than from Redis again (a replay after a restart reads Redis).
   */
  private readAhead = new Map<string, { after: string; entries: Array<[string, string[]]> }>();
  /** Trimmed ranges skipped (failOnDataLoss false). */
  numDataLossRanges = 0;

  constructor(
    private readonly config: RedisSourceConfig,
    /** Where it keeps the offsets it started from (CheckpointPaths.redisStart). */
    private readonly startPath: string,
    /** The declared schema (fields as typed columns), or the standard columns. */
    readonly schema: Schema = REDIS_SCHEMA,
  ) {
    this.description = `RedisStreamSource[${config.url}, ${config.streams.join(',')}]`;
    this.redis = client(config.url, 10);
    this.redis.on('error', () => {});
  }

  private async ready(): Promise<Redis> {
    if (this.redis.status === 'wait') await this.redis.connect().catch((e: unknown) => Promise.reject(connectionError(this.config.url, e)));
    return this.redis;
  }

  private async call<T>(what: string, fn: (r: Redis) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.ready());
    } catch (e) {
      if (e instanceof SluiceError) throw e;
      throw new SluiceError('REDIS_CONNECTION_LOST', `lost Redis at ${this.config.url} while ${what}, after retries with backoff: ${(e as Error).message}`, {
        option: 'url',
        cause: e,
      });
    }
  }

  /** Where the first batch starts, kept in the source's log so that `latest` means the same after a restart. */
  private async initialOffsets(): Promise<Offsets> {
    if (this.initial) return this.initial;
    const path = this.startPath;
    if (existsSync(path)) {
      this.initial = readVersioned<Offsets>(path);
      return this.initial;
    }
    const s = this.config.startingOffsets;
    const offsets: Offsets = {};
    const ordinals: Record<string, number> = {};
    for (const stream of this.config.streams) {
      const info = await this.info(stream);
      if (s === 'earliest') {
        offsets[stream] = '0-0';
        // What was trimmed before the query started is not lost to it.
        ordinals[stream] = info.added - info.length;
      } else if (s === 'latest') {
        offsets[stream] = info.lastId;
        ordinals[stream] = info.added;
      } else offsets[stream] = s[stream] ?? '0-0';
    }
    if (s === 'earliest' || s === 'latest') offsets['#'] = ordinals;
    writeVersioned(path, offsets);
    this.initial = offsets;
    return offsets;
  }

  prepareForAvailableNow(): void {
    this.pinAtFirstTrigger = true;
  }

  async latestOffset(start: SourceOffset | null, limit: ReadLimit): Promise<SourceOffset | null> {
    const from = (start as Offsets | null) ?? (await this.initialOffsets());
    if (this.pinAtFirstTrigger && this.pinned === undefined) {
      this.pinned = {};
      for (const s of this.config.streams) {
        const { lastId, added } = await this.info(s);
        this.pinned[s] = { lastId, added };
      }
    }
    const until = (s: string) => this.pinned?.[s]?.lastId ?? '+';
    const cap = limit.ignoreLimits ? undefined : this.config.maxOffsetsPerTrigger;
    const end: Offsets = { ...from, ...(from['#'] && { '#': { ...from['#'] } }) };
    this.readAhead.clear();
    const read = async (s: string, count: number | undefined): Promise<string[]> => {
      const entries = await this.call('reading entries', (r) =>
        count === undefined ? r.xrange(s, `(${idOf(from, s)}`, until(s)) : r.xrange(s, `(${idOf(from, s)}`, until(s), 'COUNT', count),
      );
      this.readAhead.set(s, { after: idOf(from, s), entries });
      return entries.map((e) => e[0]);
    };
    if (cap === undefined) {
      for (const s of this.config.streams) {
        const ids = await read(s, undefined);
        this.advance(end, s, ids, ids.length);
      }
      return end;
    }
    // Each stream's backlog: entries it received past the start (from the ordinals), or, for a
    // stream started at an id (no ordinal), the entries past it counted up to the cap.
    const backlog = new Map<string, number>();
    const counted = new Map<string, string[]>();
    for (const s of this.config.streams) {
      const ordinal = ordinalOf(from, s);
      if (ordinal !== undefined) backlog.set(s, Math.max(0, (this.pinned?.[s]?.added ?? (await this.info(s)).added) - ordinal));
      else {
        const ids = await read(s, cap);
        counted.set(s, ids);
        backlog.set(s, ids.length);
      }
    }
    const shares = prorate(cap, backlog);
    for (const s of this.config.streams) {
      const n = shares.get(s) ?? 0;
      if (n === 0) continue;
      const ids = counted.get(s) ?? (await read(s, n));
      this.advance(end, s, ids, Math.min(n, ids.length));
    }
    return end;
  }

  /**
   * Spark's Kafka metrics of a batch's end: entries each stream has past it (from the ordinals),
   * their min, max and average, and their sum (the backlog).
   */
  async metrics(end: SourceOffset | null): Promise<Record<string, string> | undefined> {
    if (end === null) return undefined;
    const behind: number[] = [];
    for (const s of this.config.streams) {
      const ordinal = ordinalOf(end as Offsets, s);
      if (ordinal === undefined) return undefined;
      behind.push(Math.max(0, (await this.info(s)).added - ordinal));
    }
    const sum = behind.reduce((a, b) => a + b, 0);
    return {
      minOffsetsBehindLatest: String(Math.min(...behind)),
      maxOffsetsBehindLatest: String(Math.max(...behind)),
      avgOffsetsBehindLatest: String(sum / behind.length),
      offsetsBehindLatest: String(sum),
      ...(this.numDataLossRanges > 0 && { dataLossRanges: String(this.numDataLossRanges) }),
    };
  }

  /** Moves `end` of stream `s` past its first `n` new entries `ids`. */
  private advance(end: Offsets, s: string, ids: string[], n: number): void {
    if (n <= 0) return;
    end[s] = ids[n - 1] as string;
    const ordinal = ordinalOf(end, s);
    if (ordinal !== undefined) end['#'] = { ...end['#'], [s]: ordinal + n };
  }

  private async info(stream: string): Promise<{ added: number; length: number; lastId: string }> {
    const info = await this.call(`reading XINFO of ${stream}`, (r) => r.xinfo('STREAM', stream) as Promise<unknown[]>);
    const field = (name: string): unknown => info[info.indexOf(name) + 1];
    return { added: Number(field('entries-added') ?? 0), length: Number(field('length') ?? 0), lastId: String(field('last-generated-id') ?? '0-0') };
  }

  async planSplits(start: SourceOffset | null, end: SourceOffset): Promise<InputSplit[]> {
    const from = (start as Offsets | null) ?? (await this.initialOffsets());
    const to = end as Offsets;
    const rows: Row[] = [];
    for (const s of this.config.streams) {
      const a = idOf(from, s);
      const b = typeof to[s] === 'string' ? (to[s] as string) : a;
      if (compareIds(b, a) <= 0) continue;
      await this.checkLoss(s, a, ordinalOf(from, s));
      const entries = this.readAheadOf(s, a, b) ?? (await this.call(`reading ${s}`, (r) => r.xrange(s, `(${a}`, b)));
      for (const [id, flat] of entries) {
        const fields: Record<string, string> = {};
        for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
        const standard: Row = { stream: s, id, timestamp: Number(id.split('-')[0]), fields: JSON.stringify(fields) };
        if (this.schema === REDIS_SCHEMA) rows.push(standard);
        else {
          const row: Row = {};
          for (const f of this.schema) row[f.name] = f.name in standard ? standard[f.name] : fieldValue(fields[f.name], f.type as string);
          rows.push(row);
        }
      }
    }
    return rows.length === 0 ? [] : [{ type: 'rows', data: encodeRows(rows) }];
  }

  /** The entries (a, b] of stream `s` from the read-ahead, when it covers them. */
  private readAheadOf(s: string, a: string, b: string): Array<[string, string[]]> | undefined {
    const r = this.readAhead.get(s);
    if (r === undefined || r.after !== a) return undefined;
    const last = r.entries.findIndex((e) => e[0] === b);
    return last < 0 ? undefined : r.entries.slice(0, last + 1);
  }

  /**
   * Entries after `after` (the `read`-th entry the stream received) removed before this read: the
   * stream lost `added - length` entries from its head, more than it had when `after` was read.
   */
  private async checkLoss(stream: string, after: string, read: number | undefined): Promise<void> {
    if (read === undefined) return;
    const { added, length } = await this.info(stream);
    const lost = added - length - read;
    if (lost <= 0) return;
    const first = (await this.call(`reading ${stream}`, (r) => r.xrange(stream, '-', '+', 'COUNT', 1)))[0]?.[0] ?? 'its end';
    const range = `(${after}, ${first}): ${lost} entries`;
    if (this.config.failOnDataLoss) {
      throw new SluiceError(
        'REDIS_DATA_LOSS',
        `entries of Redis stream ${stream} in ${range} were trimmed or deleted before the query read them; set failOnDataLoss to false to skip them`,
        { option: 'failOnDataLoss' },
      );
    }
    this.numDataLossRanges++;
    warn('SLUICE_REDIS_DATA_LOSS', `entries of Redis stream ${stream} in ${range} were trimmed before the query read them; skipped (failOnDataLoss false)`);
  }

  stop(): void {
    this.redis.disconnect();
  }
}
