/**
 * A join of two streams, the task part: its map side (below; the blocks in shuffle.ts) and its
 * batch (batch.ts, Spark's symmetric hash join); plan.ts has what the driver plans with.
 */
import type { OperatorTask } from '../operator.js';
import type { StreamJoinOp } from './plan.js';
import { symmetricHashJoin } from './batch.js';
import { JoinBlockWriter } from './shuffle.js';

// ---- map side: every row of the side is sent, under its join key ----------------------------------

export const streamJoinTask: OperatorTask<StreamJoinOp> = {
  mapSide(op, input) {
    const w = new JoinBlockWriter(op, input.joinSide, input.layout, input.lateThresholdMs);
    return { add: (row) => w.addRow(row), finish: () => w.finish() };
  },
  mapSideColumns: (op, input) => new JoinBlockWriter(op, input.joinSide, input.layout, input.lateThresholdMs),
  run: symmetricHashJoin,
};
