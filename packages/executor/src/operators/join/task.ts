/**
 * A join of two streams, the task part: its map side (below) and its batch (batch.ts, Spark's
 * symmetric hash join); plan.ts has what the driver plans with.
 */
import { normalizer } from '../mapSide.js';
import { resolveColumn } from '../../expressions/resolveColumn.js';
import { ShuffleWriter } from '../../shuffle/ShuffleWriter.js';
import type { StateLayoutMsg } from '../../task/messages.js';
import type { OperatorTask, Partials } from '../operator.js';
import { isLateAt } from '../stateContext.js';
import { eventTimeOf, type JoinSide, type StreamJoinOp } from './plan.js';
import { symmetricHashJoin } from './batch.js';

// ---- map side: every row of the side is sent, under its join key ----------------------------------

function joinPartials(op: StreamJoinOp, side: JoinSide, layout: StateLayoutMsg, lateThresholdMs: number | null): Partials {
  const keys = side === 0 ? op.leftKeys : op.rightKeys;
  // Both sides encode keys with the left's types (the join checked that they are the same).
  const types = op.leftKeys.map((k) => resolveColumn(k, op.left.schema).field.type);
  const norms = types.map(normalizer);
  const time = (side === 0 ? op.left : op.right).eventTime;
  const writer = new ShuffleWriter(layout, types);
  let numRecords = 0;
  let numLate = 0;
  return {
    add(row) {
      if (time !== null && isLateAt(eventTimeOf(row[time]), lateThresholdMs)) {
        numLate += 1;
        return;
      }
      let values: unknown[] | null = [];
      for (let i = 0; i < keys.length; i++) {
        const v = row[keys[i] as string];
        if (v === null || v === undefined) {
          if (op.nullSafe?.[i] === true) {
            values.push(null);
            continue;
          }
          values = null;
          break;
        }
        const norm = norms[i];
        values.push(norm === undefined ? v : norm(v));
      }
      writer.addJoinRow(values, row, side);
      numRecords += 1;
    },
    finish: () => ({ blocks: writer.finish(), numRecords, numLate }),
  };
}

export const streamJoinTask: OperatorTask<StreamJoinOp> = {
  mapSide: (op, input) => joinPartials(op, input.joinSide, input.layout, input.lateThresholdMs),
  run: symmetricHashJoin,
};
