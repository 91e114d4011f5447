/**
 * A stream-static join (operators/join.ts) over column batches: each row's key looks up the
 * static side's index, the stream's columns are gathered for the output rows (a row once per
 * match), and the static side's columns are built from the matched rows. A join with a residual
 * condition runs as rows (its condition reads both rows at once).
 */
import type { Op } from '../operators/types.js';
import type { Row, Schema } from '../schema/types.js';
import { indexOf, keyOfValues } from '../operators/join.js';
import { gather, valueAt, VectorBuilder, type ColumnBatch, type Vector } from './vectors.js';

type JoinOp = Extract<Op, { kind: 'join' }>;

export function joinRunsOnColumns(op: Op): boolean {
  return op.kind === 'join' && op.residual === undefined;
}

/** The step of `op` over batches of `schema`, giving batches of `out` (its output schema). */
export function joinStep(op: JoinOp, schema: Schema, out: Schema): (batch: ColumnBatch) => ColumnBatch {
  const index = indexOf(op);
  // Every output column that is not the stream's comes from the static side.
  const fromLeft = new Set(schema.map((f) => f.name));
  return (batch) => {
    const keys = op.keys.map((k) => batch.columns.get(k) as Vector);
    const n = batch.length;
    let idx = new Int32Array(n);
    const matched: Array<Row | undefined> = [];
    let m = 0;
    const values: unknown[] = new Array(keys.length);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < keys.length; k++) values[k] = valueAt(keys[k]!, i);
      const key = keyOfValues(values);
      const found = key === undefined ? undefined : index.get(key);
      if (op.how === 'left_semi' || op.how === 'left_anti') {
        if ((found !== undefined) === (op.how === 'left_semi')) idx[m++] = i;
        continue;
      }
      if (found === undefined) {
        if (op.how === 'left_outer') {
          idx[m] = i;
          matched[m++] = undefined;
        }
        continue;
      }
      if (m + found.length > idx.length) {
        const grown = new Int32Array(Math.max(2 * idx.length, m + found.length));
        grown.set(idx);
        idx = grown;
      }
      for (const r of found) {
        idx[m] = i;
        matched[m++] = r;
      }
    }
    const columns = new Map<string, Vector>();
    for (const f of out) {
      if (fromLeft.has(f.name)) {
        columns.set(f.name, gather(batch.columns.get(f.name) as Vector, idx, m));
        continue;
      }
      const b = new VectorBuilder(f.type, m);
      for (let j = 0; j < m; j++) b.push(matched[j]?.[f.name] ?? null);
      columns.set(f.name, b.build(m));
    }
    return { length: m, columns };
  };
}
