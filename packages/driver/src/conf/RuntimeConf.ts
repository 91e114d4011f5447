/**
 * Session configuration. Keys are `sluice.*`; the same key spelled `spark.*` is an alias, so a
 * Spark snippet's `conf.set('spark.sql.shuffle.partitions', ...)` ports as is. Values are checked
 * when set, so a bad value fails at the call that introduced it.
 */
import { availableParallelism } from 'node:os';
import { SluiceError } from '@sluice/state';

type Parser = (raw: unknown, key: string) => unknown;

interface ConfEntry {
  default: () => unknown;
  parse: Parser;
  doc: string;
}

function invalid(key: string, what: string, raw: unknown): SluiceError {
  return new SluiceError('INVALID_CONF', `conf ${key} must be ${what} (got ${JSON.stringify(raw)})`, {
    option: key,
  });
}

const positiveInt: Parser = (raw, key) => {
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw invalid(key, 'a positive integer', raw);
  return n;
};
const nonNegativeInt: Parser = (raw, key) => {
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw invalid(key, 'a non-negative integer', raw);
  return n;
};
const bool: Parser = (raw, key) => {
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw invalid(key, 'true or false', raw);
};
const oneOf =
  (...allowed: string[]): Parser =>
  (raw, key) => {
    const s = String(raw).toLowerCase();
    const hit = allowed.find((a) => a.toLowerCase() === s);
    if (hit === undefined) throw invalid(key, `one of ${allowed.join(', ')}`, raw);
    return hit;
  };
const partitionsOrAuto: Parser = (raw, key) => (String(raw).toLowerCase() === 'auto' ? 'auto' : positiveInt(raw, key));
const optionalPositiveInt: Parser = (raw, key) => (raw === undefined || raw === null ? undefined : positiveInt(raw, key));
const json: Parser = (raw, key) => {
  if (typeof raw === 'object' && raw !== null) return raw;
  try {
    return JSON.parse(String(raw));
  } catch {
    throw invalid(key, 'a JSON object', raw);
  }
};

export const CONF: Record<string, ConfEntry> = {
  'sluice.executor.cores': {
    default: () => availableParallelism(),
    parse: positiveInt,
    doc: 'task slots = worker threads (1 slot : 1 core)',
  },
  'sluice.sql.shuffle.partitions': {
    default: () => 200,
    parse: partitionsOrAuto,
    doc: 'shuffle partitions; `auto` lets the engine choose (stateless)',
  },
  'sluice.sql.streaming.stateStore.partitions': {
    default: () => undefined,
    parse: optionalPositiveInt,
    doc: 'state partitions of stateful queries; wins over shuffle.partitions',
  },
  'sluice.sql.streaming.stateStore.keyGroups': {
    default: () => 4096,
    parse: positiveInt,
    doc: 'fixed hash space of state keys, pinned at checkpoint creation',
  },
  'sluice.sql.streaming.stateStore.shards': {
    default: () => undefined,
    parse: optionalPositiveInt,
    doc: 'LevelDB instances per stateful operator (default: the slot count at creation); pinned in the checkpoint',
  },
  'sluice.sql.adaptive.streaming.stateless.enabled': {
    default: () => true,
    parse: bool,
    doc: 'adaptive coalescing of shuffle partitions in stateless queries',
  },
  'sluice.sql.adaptive.advisoryPartitionSizeInBytes': {
    default: () => 16 * 1024 * 1024,
    parse: positiveInt,
    doc: 'target input bytes of one task of a stateless query',
  },
  'sluice.sql.streaming.minBatchesToRetain': {
    default: () => 100,
    parse: positiveInt,
    doc: 'offset and commit log entries kept',
  },
  'sluice.sql.streaming.multipleWatermarkPolicy': {
    default: () => 'min',
    parse: oneOf('min', 'max'),
    doc: 'global watermark over several inputs',
  },
  'sluice.sql.streaming.noDataMicroBatches.enabled': {
    default: () => true,
    parse: bool,
    doc: 'run a batch with no input to advance the watermark and evict state',
  },
  'sluice.sql.streaming.noDataProgressEventInterval': {
    default: () => 10_000,
    parse: nonNegativeInt,
    doc: 'ms between two onQueryIdle events of an idle query',
  },
  'sluice.sql.streaming.pollingDelay': {
    default: () => 10,
    parse: nonNegativeInt,
    doc: 'ms an idle query with the default trigger waits before looking for new data again',
  },
  'sluice.sql.streaming.stateStore.maxMemoryMB': { default: () => 512, parse: positiveInt, doc: 'per worker state memory budget' },
  'sluice.sql.streaming.stateStore.maxOpenFiles': { default: () => 1000, parse: positiveInt, doc: 'per worker LevelDB file handles' },
  'sluice.scheduler.mode': { default: () => 'FIFO', parse: oneOf('FIFO', 'FAIR'), doc: 'FIFO or FAIR between scheduler pools' },
  'sluice.scheduler.pools': { default: () => ({}), parse: json, doc: 'scheduler pools' },
  'sluice.scheduler.listenerbus.eventqueue.capacity': {
    default: () => 10_000,
    parse: positiveInt,
    doc: 'listener queue; when full events are dropped and counted',
  },
  'sluice.task.maxFailures': { default: () => 4, parse: positiveInt, doc: 'attempts of one task before the query fails' },
};

export function canonicalKey(key: string): string {
  return key.startsWith('spark.') ? `sluice.${key.slice('spark.'.length)}` : key;
}

export class RuntimeConf {
  private readonly values = new Map<string, unknown>();

  constructor(initial: Record<string, unknown> = {}) {
    for (const [k, v] of Object.entries(initial)) this.set(k, v);
  }

  set(key: string, value: unknown): void {
    const k = canonicalKey(key);
    const entry = CONF[k];
    if (!entry) {
      throw new SluiceError('INVALID_CONF', `unknown conf key ${key}; see the README's configuration table`, { option: key });
    }
    if (value === undefined || value === null) {
      this.values.delete(k);
      return;
    }
    this.values.set(k, entry.parse(value, key));
  }

  get<T = unknown>(key: string): T {
    const k = canonicalKey(key);
    const entry = CONF[k];
    if (!entry) throw new SluiceError('INVALID_CONF', `unknown conf key ${key}`, { option: key });
    return (this.values.has(k) ? this.values.get(k) : entry.default()) as T;
  }

  isSet(key: string): boolean {
    return this.values.has(canonicalKey(key));
  }

  unset(key: string): void {
    this.values.delete(canonicalKey(key));
  }

  /** Snapshot taken by a query at start: later session changes do not affect it. */
  snapshot(): RuntimeConf {
    const c = new RuntimeConf();
    for (const [k, v] of this.values) c.values.set(k, v);
    return c;
  }
}
