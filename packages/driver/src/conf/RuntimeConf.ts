/**
 * Session configuration. Keys are `sluice.*`; the same key spelled `spark.*` is an alias, so a
 * Spark snippet's `conf.set('spark.sql.shuffle.partitions', ...)` ports as is. Values are checked
 * when set, so a bad value fails at the call that introduced it.
 */
import { availableParallelism } from 'node:os';
import { CONF_KEYS, didYouMean, SluiceError, suggest, type ConfKey } from '@sluice/state';
import { parseBoolean, parseBytes, parseDuration, parseEnum, parseJsonObject, parsePositiveInt, parsePositiveIntOrAuto } from './parsers.js';

type Parser<T> = (raw: unknown, key: string) => T;

/** A key's default, parser and meaning; the parser's result type is the key's type (ConfValue). */
interface ConfEntry<T> {
  default: () => T;
  parse: Parser<T>;
  doc: string;
}

const positiveInt: Parser<number> = (raw, key) => parsePositiveInt(raw, key, 'conf');
const bool: Parser<boolean> = (raw, key) => parseBoolean(raw, key, 'conf');
const duration: Parser<number> = (raw, key) => parseDuration(raw as string | number, key, { kind: 'conf' });
const bytes: Parser<number> = (raw, key) => parseBytes(raw, key, 'conf');
const oneOf =
  <T extends string>(...allowed: T[]): Parser<T> =>
  (raw, key) =>
    parseEnum(raw, allowed, key, 'conf');
const nonEmptyString: Parser<string> = (raw, key) => {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new SluiceError('INVALID_CONF', `${key} must be a non-empty path, got ${JSON.stringify(raw)}`, { option: key });
  }
  return raw;
};
/** sluice.scheduler.pools, strictly: each pool an object of schedulingMode, weight and minShare only. */
const parsePools: Parser<Record<string, PoolConf>> = (raw, key) => {
  const pools = parseJsonObject(raw, key, 'conf');
  const out: Record<string, PoolConf> = {};
  for (const [name, p] of Object.entries(pools)) {
    const at = `${key}.${name}`;
    if (name === '' || typeof p !== 'object' || p === null || Array.isArray(p)) {
      throw new SluiceError('INVALID_CONF', `${at} must be an object such as { "schedulingMode": "FAIR", "weight": 2, "minShare": 1 }`, { option: key });
    }
    const o = p as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (k !== 'schedulingMode' && k !== 'weight' && k !== 'minShare') {
        throw new SluiceError('INVALID_CONF', `${at}: unknown setting '${k}' (a pool has schedulingMode, weight and minShare)`, { option: key });
      }
    }
    const count = (k: 'weight' | 'minShare', dflt: number): number => {
      const v = o[k] ?? dflt;
      if (!Number.isInteger(v) || (v as number) < 0)
        throw new SluiceError('INVALID_CONF', `${at}.${k} must be a non-negative integer, got ${JSON.stringify(v)}`, { option: key });
      return v as number;
    };
    const mode = o.schedulingMode ?? 'FIFO';
    if (mode !== 'FIFO' && mode !== 'FAIR') {
      throw new SluiceError('INVALID_CONF', `${at}.schedulingMode must be FIFO or FAIR, got ${JSON.stringify(mode)}`, { option: key });
    }
    out[name] = { schedulingMode: mode, weight: count('weight', 1), minShare: count('minShare', 0) };
  }
  return out;
};
const optionalPositiveInt: Parser<number | undefined> = (raw, key) => (raw === undefined || raw === null ? undefined : positiveInt(raw, key));

/** A scheduler pool of sluice.scheduler.pools: Spark's schedulingMode, weight and minShare. */
export interface PoolConf {
  schedulingMode: 'FIFO' | 'FAIR';
  weight: number;
  minShare: number;
}

const K = CONF_KEYS;

/**
 * Every key with its default, parser and meaning; docs/reference/conf.md's table mirrors it.
 * @internal Exported for the check that holds docs/reference/conf.md to it.
 */
export const CONF = {
  [K.executorCores]: {
    default: () => availableParallelism(),
    parse: positiveInt,
    doc: 'task slots = worker threads (1 slot : 1 core)',
  },
  [K.shufflePartitions]: {
    default: (): number | 'auto' => 200,
    parse: (raw: unknown, key: string) => parsePositiveIntOrAuto(raw, key, 'conf'),
    doc: 'shuffle partitions; `auto` lets the engine choose (stateless)',
  },
  [K.stateStorePartitions]: {
    default: () => undefined as number | undefined,
    parse: optionalPositiveInt,
    doc: 'state partitions of stateful queries; wins over shuffle.partitions',
  },
  [K.stateStoreKeyGroups]: {
    default: () => 4096,
    parse: positiveInt,
    doc: 'fixed hash space of state keys, pinned at checkpoint creation',
  },
  [K.stateStoreShards]: {
    default: () => undefined as number | 'auto' | undefined,
    parse: (raw: unknown, key: string) => (raw === undefined || raw === null ? undefined : parsePositiveIntOrAuto(raw, key, 'conf')),
    doc: "LevelDB instances per stateful operator (default: the slot count at creation, then kept); 'auto' follows the slots at every start; a change repartitions",
  },
  [K.adaptiveStatelessEnabled]: {
    default: () => true,
    parse: bool,
    doc: 'adaptive coalescing of shuffle partitions in stateless queries',
  },
  [K.autoBroadcastJoinThreshold]: {
    default: () => 10 * 1024 * 1024,
    // As in Spark: bytes, or -1 to never broadcast.
    parse: (raw: unknown, key: string): number => (raw === -1 || raw === '-1' ? -1 : bytes(raw, key)),
    doc: 'largest static join side, encoded, that is broadcast; larger ones are shuffled',
  },
  [K.advisoryPartitionSizeInBytes]: {
    default: () => 16 * 1024 * 1024,
    parse: bytes,
    doc: 'target input bytes of one task of a stateless query',
  },
  [K.minBatchesToRetain]: {
    default: () => 100,
    parse: positiveInt,
    doc: 'offset and commit log entries kept',
  },
  [K.multipleWatermarkPolicy]: {
    default: (): 'min' | 'max' => 'min',
    parse: oneOf('min', 'max'),
    doc: 'global watermark over several inputs',
  },
  [K.noDataMicroBatchesEnabled]: {
    default: () => true,
    parse: bool,
    doc: 'run a batch with no input to advance the watermark and evict state',
  },
  [K.noDataProgressEventInterval]: {
    default: () => 10_000,
    parse: duration,
    doc: 'ms between two onQueryIdle events of an idle query',
  },
  [K.pollingDelay]: {
    default: () => 10,
    parse: duration,
    doc: 'ms an idle query with the default trigger waits before looking for new data again',
  },
  [K.stopTimeout]: {
    default: () => 10_000,
    parse: duration,
    doc: "the longest query.stop() waits for the batch in flight before it ends that batch's tasks (0: no limit)",
  },
  [K.fileSourceLogCompactInterval]: {
    default: () => 10,
    parse: positiveInt,
    doc: "the file source's seen-file log is compacted every N entries",
  },
  [K.stateStoreMaxMemoryMB]: { default: () => 512, parse: positiveInt, doc: 'per worker state memory budget' },
  [K.stateStoreMaxOpenFiles]: { default: () => 1000, parse: positiveInt, doc: 'per worker LevelDB file handles' },
  [K.warehouseDir]: {
    default: () => './sluice-warehouse',
    parse: nonEmptyString,
    doc: 'where toTable() tables live (one directory each)',
  },
  [K.sourcesDefault]: {
    default: () => 'json' as 'json' | 'delta',
    parse: oneOf('json', 'delta'),
    doc: 'the format of writeStream without .format(...) and of the tables toTable() creates',
  },
  [K.checkpointRoot]: {
    default: () => undefined as string | undefined,
    parse: (raw: unknown, key: string) => (raw === undefined || raw === null ? undefined : nonEmptyString(raw, key)),
    doc: 'checkpoint root of queries without checkpointLocation: <root>/<queryName>',
  },
  [K.executorHeapMB]: {
    default: () => undefined as number | undefined,
    parse: optionalPositiveInt,
    doc: "each worker's JavaScript heap limit in MB (default: stateStore.maxMemoryMB + 512)",
  },
  [K.stateStoreChangelog]: {
    default: () => true,
    parse: bool,
    doc: 'a state commit appends to a synced changelog; LevelDB catches up in the background',
  },
  [K.schedulerMode]: { default: (): 'FIFO' | 'FAIR' => 'FIFO', parse: oneOf('FIFO', 'FAIR'), doc: 'FIFO or FAIR between scheduler pools' },
  [K.schedulerPools]: {
    default: (): Record<string, PoolConf> => ({}),
    parse: parsePools,
    doc: 'scheduler pools: { name: { schedulingMode, weight, minShare } }',
  },
  [K.listenerBusCapacity]: {
    default: () => 10_000,
    parse: positiveInt,
    doc: 'listener queue; when full events are dropped and counted',
  },
  [K.uiEnabled]: { default: () => false, parse: bool, doc: 'serve the live dashboard when the session starts' },
  [K.uiPort]: {
    default: () => 4040,
    parse: (raw: unknown, key: string): number => (raw === 0 || raw === '0' ? 0 : positiveInt(raw, key)),
    doc: 'port of the dashboard (0: a free one)',
  },
  [K.listenerBusCloseTimeout]: {
    default: () => 5_000,
    parse: duration,
    doc: 'the longest session.close() waits for listeners to take the queued events',
  },
  [K.taskMaxFailures]: { default: () => 4, parse: positiveInt, doc: 'attempts of one task before the query fails' },
} satisfies { [K in ConfKey]: ConfEntry<unknown> };

/** The type of each key's value, from its parser in the conf table (docs/reference/conf.md lists them). */
export type ConfValues = { [P in ConfKey]: ReturnType<(typeof CONF)[P]['parse']> };
/** The type of a key's value (`ConfValue<'sluice.sql.shuffle.partitions'>` is `number | 'auto'`). */
export type ConfValue<K extends ConfKey> = ConfValues[K];

export function canonicalKey(key: string): string {
  return key.startsWith('spark.') ? `sluice.${key.slice('spark.'.length)}` : key;
}

function entryOf(key: string): ConfEntry<unknown> {
  const k = canonicalKey(key);
  if (!Object.hasOwn(CONF, k)) {
    // Suggested in the prefix the user wrote (spark.* keys are aliases of sluice.* ones).
    const prefix = key.startsWith('spark.') ? 'spark.' : 'sluice.';
    const suggestions = suggest(
      key,
      Object.keys(CONF).map((c) => prefix + c.slice('sluice.'.length)),
    );
    throw new SluiceError('INVALID_CONF', `unknown conf key ${key}.${didYouMean(suggestions, (n) => `\`${n}\``)} See docs/reference/conf.md.`, {
      option: key,
      suggestions,
    });
  }
  return CONF[k as ConfKey];
}

/**
 * A session's configuration (Spark's RuntimeConfig), as `session.conf`. Keys are `sluice.*`; the
 * same key spelled `spark.*` is an alias. A value is checked when set: an unknown key or a bad
 * value is INVALID_CONF at that call. A query takes a snapshot when it starts, so a later change
 * affects the queries started after it.
 *
 * @example
 * ```ts
 * session.conf.set('sluice.sql.shuffle.partitions', 8);
 * session.conf.set('spark.sql.streaming.stateStore.partitions', '4');
 * session.conf.get('sluice.sql.shuffle.partitions'); // 8
 * ```
 */
export class RuntimeConf {
  private readonly values = new Map<string, unknown>();

  /** @internal */
  constructor(initial: Record<string, unknown> = {}) {
    for (const [k, v] of Object.entries(initial)) this.set(k, v);
  }

  /** Sets `key` (checked now: INVALID_CONF); null or undefined unsets it. */
  set(key: string, value: unknown): void {
    const entry = entryOf(key);
    const k = canonicalKey(key);
    if (value === undefined || value === null) {
      this.values.delete(k);
      return;
    }
    this.values.set(k, entry.parse(value, key));
  }

  /** A key's value (its default when unset), typed by the conf table; a `spark.*` alias or another string reads as unknown. */
  get<K extends ConfKey>(key: K): ConfValue<K>;
  get(key: string): unknown;
  get(key: string): unknown {
    const entry = entryOf(key);
    const k = canonicalKey(key);
    return this.values.has(k) ? this.values.get(k) : entry.default();
  }

  /** Whether `key` was set (rather than at its default). */
  isSet(key: string): boolean {
    return this.values.has(canonicalKey(key));
  }

  /** Returns `key` to its default. */
  unset(key: string): void {
    this.values.delete(canonicalKey(key));
  }

  /** @internal Snapshot taken by a query at start: later session changes do not affect it. */
  snapshot(): RuntimeConf {
    const c = new RuntimeConf();
    for (const [k, v] of this.values) c.values.set(k, v);
    return c;
  }
}
