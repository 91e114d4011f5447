/**
 * dropDuplicates and dropDuplicatesWithinWatermark (Spark's StreamingDeduplicateExec and
 * StreamingDeduplicateWithinWatermarkExec), the task part: a row is emitted the first time its key
 * is seen (plan.ts has what the driver plans with).
 *
 * - Map side: the first row per key of the task (late rows dropped first), one record per key.
 * - State: one value per key seen (@sluice/state's dedupState.ts: the key's expiry), indexed by that
 *   expiry when the operator uses the watermark: the event time itself, or for
 *   dropDuplicatesWithinWatermark the first event time plus the delay.
 * - A batch: late records drop; the first record of each key not in state is emitted and stored;
 *   keys whose expiry is at or below the watermark are removed.
 */
import { dataKey, dataKeyOf, encodeDedupValue, indexKey } from '@sluice/state';
import { compileExpr } from '../../expressions/compileExpr.js';
import { resolveColumn } from '../../expressions/resolveColumn.js';
import { CompileCache } from '../../compileCache.js';
import { decodeBlock, type DedupRecord } from '../../shuffle/shuffleCodec.js';
import { ShuffleWriter } from '../../shuffle/ShuffleWriter.js';
import type { DataType, Row, Schema } from '../../schema/types.js';
import { keyPart, normalizer } from '../mapSide.js';
import type { MapSideInput, OperatorTask, Partials } from '../operator.js';
import { isLateAt, type StateContext } from '../stateContext.js';
import { keyString } from '../stateCache.js';
import { dedupOutputSchema, type DedupOp } from './plan.js';

// ---- map side ------------------------------------------------------------------------------------

/** The first row of a key in the task: its key values and the record it becomes. */
interface KeyEntry {
  values: unknown[];
  record(keyBytes: Uint8Array, keyGroup: number): DedupRecord;
}

/** The map side compiled once per plan: key types, and a collector of each key's first row. */
interface Compiled {
  keyTypes: DataType[];
  collector(lateThresholdMs: number | null): { add(row: Row): void; finish(): { entries: KeyEntry[]; late: number } };
}

function compile(op: DedupOp, schema: Schema): Compiled {
  dedupOutputSchema(op, schema);
  // dropDuplicates() without columns compares whole rows, as in Spark.
  const names = op.columns.length === 0 ? schema.map((f) => f.name) : op.columns;
  const keys = names.map((name) => {
    const type = resolveColumn(name, schema).field.type;
    return { ev: compileExpr({ op: 'col', name }, schema), part: keyPart(type), norm: normalizer(type), type };
  });
  const time = op.eventTimeColumn === null ? undefined : compileExpr({ op: 'col', name: op.eventTimeColumn }, schema);
  return {
    keyTypes: keys.map((k) => k.type),
    collector(lateThresholdMs) {
      const firsts = new Map<string, KeyEntry>();
      let late = 0;
      const add = (row: Row): void => {
        const t = time === undefined ? null : ((time(row) as number | null) ?? null);
        if (isLateAt(t, lateThresholdMs)) {
          late += 1;
          return;
        }
        let key = '';
        for (const k of keys) key += k.part(k.ev(row));
        if (firsts.has(key)) return;
        const values = keys.map((k) => (k.norm === undefined ? k.ev(row) : k.norm(k.ev(row))));
        firsts.set(key, { values, record: (keyBytes, kg): DedupRecord => [kg, keyBytes, row, t] });
      };
      return { add, finish: () => ({ entries: [...firsts.values()], late }) };
    },
  };
}

const compiled = new CompileCache<Compiled>();

function mapSide(op: DedupOp, input: MapSideInput): Partials {
  const side = compiled.of(JSON.stringify([input.schema, op]), () => compile(op, input.schema));
  const collector = side.collector(input.lateThresholdMs);
  return {
    add: collector.add,
    finish() {
      const { entries, late } = collector.finish();
      const writer = new ShuffleWriter(input.layout, side.keyTypes);
      for (const e of entries) writer.addDedup(e.values, e.record);
      return { blocks: writer.finish(), numRecords: entries.length, numLate: late };
    },
  };
}

// ---- the batch -------------------------------------------------------------------------------------

const copy = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

async function run(ctx: StateContext, op: DedupOp): Promise<Row[]> {
  const { task, watermark, counters: c, writer } = ctx;
  const first = new Map<string, DedupRecord>();
  for (const block of task.blocks) {
    for (const rec of decodeBlock<DedupRecord>(block.data)) {
      // Late records drop before deduplicating (Spark filters late rows first), so a late record of
      // a key from one map task cannot hide an on-time record of it from another
      // (dropDuplicatesWithinWatermark, whose key leaves the event time out).
      if (ctx.isLate(rec[3])) {
        c.dropped += 1;
        continue;
      }
      const k = keyString(rec[1]);
      if (!first.has(k)) first.set(k, [rec[0], copy(rec[1]), rec[2], rec[3]]);
    }
  }
  const live = [...first.values()];
  const keys = live.map((r) => dataKey(r[0], r[1]));
  const prior = await writer.read(keys);
  const rows: Row[] = [];
  /** Keys stored in this batch: the eviction knows them without a read. */
  const stored = new Set<string>();
  live.forEach((rec, i) => {
    if (prior[i]) return; // seen before: a duplicate
    const time = rec[3];
    // dropDuplicatesWithinWatermark keeps a key until its first event time plus the delay.
    const expiry = op.kind === 'dropDuplicatesWithinWatermark' && time !== null ? time + op.delayMs : time;
    if (watermark !== undefined && expiry !== null && expiry <= watermark) {
      // Already expired (late rows drop by the batch before's watermark, an operator after
      // another): emitted, and never stored.
      c.removed += 1;
      rows.push(rec[2]);
      return;
    }
    const key = keys[i]!;
    // Its value records the index entry it has: one at its expiry when the watermark evicts it.
    const indexTime = watermark === undefined ? null : expiry;
    writer.put(key, encodeDedupValue(indexTime));
    if (indexTime !== null) writer.addIndex(indexKey(indexTime, rec[0], rec[1]));
    stored.add(keyString(key));
    c.rowDelta += 1;
    rows.push(rec[2]);
  });
  c.updated = rows.length;
  // Eviction: keys whose expiry is at or below the watermark (one stored in this batch went above).
  await ctx.forEachExpired(async (index) => {
    const data = index.map(dataKeyOf);
    const values = await writer.read(data.filter((dk) => !stored.has(keyString(dk))));
    let n = 0;
    index.forEach((ik, i) => {
      const dk = data[i]!;
      // An index entry without data emits nothing, but must not be read again every batch.
      const present = stored.has(keyString(dk)) || values[n++] !== undefined;
      writer.removeIndex(ik);
      if (!present) return;
      writer.delete(dk);
      c.removed += 1;
      c.rowDelta -= 1;
    });
    await writer.flush();
  });
  return rows;
}

/** The task part of both deduplication kinds. */
export const dedupTask: OperatorTask<DedupOp> = { mapSide, run };
