/**
 * The watermarks of a query's stateful operators (Spark's WatermarkPropagator): an operator reading
 * the query's inputs runs with the query's watermark; one after others with the least of what
 * they pass on, each kind passing on its own (a join: the least of its sides' state watermarks,
 * StatefulOperator.outputWatermark).
 */
import { operatorOf } from '@sluice/executor';
import type { PlannedOperator } from '../plan/LogicalPlan.js';
import type { StatefulOperatorInfo } from './StatefulOperatorInfo.js';

export class WatermarkPropagator {
  constructor(
    private readonly operators: readonly PlannedOperator[],
    private readonly infoOf: (k: number) => StatefulOperatorInfo,
  ) {}

  /** The watermark operator `k` runs with, from the query's; undefined when an operator before it passes none on. */
  inputWatermark(k: number, watermarkMs: number): number | undefined {
    let least = Infinity;
    for (const f of (this.operators[k] as PlannedOperator).feeds) {
      let wm: number | undefined = watermarkMs;
      if ('operator' in f) {
        wm = this.inputWatermark(f.operator, watermarkMs);
        const op = this.infoOf(f.operator).op;
        const out = operatorOf(op).outputWatermark;
        if (wm !== undefined && out !== undefined) wm = out(op, wm);
      }
      if (wm === undefined) return undefined;
      least = Math.min(least, wm);
    }
    return least;
  }

  /**
   * The event time at or below which operator `k`'s map side drops rows as late: Spark's
   * watermark for late events, the one the operator ran with in the batch before, for a kind whose
   * map side drops them (a deduplication, before it keeps a first row per key; a join of two
   * streams, so that rows the last batch could still have joined are not lost); null for the
   * others, which drop late keys in the state task by the same watermark.
   */
  lateThreshold(k: number, lateWatermarkMs: number): number | null {
    const info = this.infoOf(k);
    if (!operatorOf(info.op).lateOnMapSide || !info.usesWatermark) return null;
    return this.inputWatermark(k, lateWatermarkMs) ?? null;
  }
}
