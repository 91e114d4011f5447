import type { StateLayout } from '@sluice/state';
import { MetadataLog } from './MetadataLog.js';
import { layoutCounts } from './StateLayoutFile.js';

/** Offsets are JSON values chosen by each source; `null` means the source had no data yet. */
export type SourceOffset = unknown;

/**
 * What a control batch does, recorded in its offsets entry: `type` names the operation
 * (REPARTITION), and the rest is that operation's own payload (old and new layout, phase).
 */
export interface ControlPayload {
  type: string;
  [field: string]: unknown;
}

/**
 * `offsets/N`: the write-ahead entry of batch N. A data batch reads its sources up to `offsets`;
 * a control batch reads no source data (its `offsets` repeat the previous batch's ends) and runs
 * the operation in `control` instead. Entries written before batch kinds existed have no `kind`
 * and are data batches.
 */
export type OffsetSeq = DataOffsetSeq | ControlOffsetSeq;

interface OffsetSeqBase {
  batchId: number;
  batchTimestampMs: number;
  /**
   * The watermark the batch ran with. A control batch repeats that of the data batch before it,
   * so that a no-data batch due before it is still due after it.
   */
  batchWatermarkMs: number;
  /** End offset per source, in source order. */
  offsets: SourceOffset[];
  /** Settings the batch ran with (the state layout), as in Spark's OffsetSeqMetadata. */
  conf: Record<string, unknown>;
}

export interface DataOffsetSeq extends OffsetSeqBase {
  kind: 'data';
}

export interface ControlOffsetSeq extends OffsetSeqBase {
  kind: 'control';
  control: ControlPayload;
}

/**
 * The state layout counts a data batch's entry records in its `conf`, from the layouts by operator
 * id: the first operator's, as entries recorded them before queries had several (none: a
 * stateless query).
 */
export function layoutConf(layouts: readonly StateLayout[]): Record<string, unknown> {
  const [first] = layouts;
  return first ? layoutCounts(first) : {};
}

function isOffsetSeq(v: unknown): v is OffsetSeq {
  const o = v as OffsetSeq;
  if (
    typeof o !== 'object' ||
    o === null ||
    !Number.isInteger(o.batchId) ||
    typeof o.batchTimestampMs !== 'number' ||
    typeof o.batchWatermarkMs !== 'number' ||
    !Array.isArray(o.offsets) ||
    typeof o.conf !== 'object'
  ) {
    return false;
  }
  const kind = (o as { kind?: unknown }).kind;
  if (kind === undefined || kind === 'data') return true;
  const control = (o as { control?: { type?: unknown } | null }).control;
  return kind === 'control' && typeof control === 'object' && control !== null && typeof control.type === 'string';
}

export class OffsetLog extends MetadataLog<OffsetSeq> {
  constructor(dir: string) {
    super(dir, isOffsetSeq);
  }

  /** The entry of batch N; one without a kind (an older Sluice wrote it) is a data batch. */
  override get(batchId: number): OffsetSeq | undefined {
    const entry = super.get(batchId);
    return entry && ({ ...entry, kind: entry.kind ?? 'data' } as OffsetSeq);
  }

  /** Path of entry N, for errors that name it. */
  pathOf(batchId: number): string {
    return this.path(batchId);
  }
}
