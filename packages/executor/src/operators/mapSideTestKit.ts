/** Shared by the map-side and state-task tests: the partials of an array of rows. */
import { streamPartials, type PartitionedPartials } from './mapSide.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import type { StateLayoutMsg } from '../task/messages.js';
import type { Row, Schema } from '../schema/types.js';
import type { StatefulOp } from './types.js';

/** streamPartials fed `rows` one at a time, as a map task feeds it. */
export function partitionPartials(
  rows: readonly Row[],
  op: StatefulOp,
  schema: Schema,
  layout: StateLayoutMsg,
  udfs: UdfRegistry = new Map(),
  lateThresholdMs: number | null = null,
): PartitionedPartials {
  const stream = streamPartials(op, schema, layout, udfs, lateThresholdMs);
  for (const row of rows) stream.add(row);
  return stream.finish();
}
