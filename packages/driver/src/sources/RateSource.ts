/**
 * `rate`: `rowsPerSecond` rows a second with columns timestamp and value. The start time is
 * persisted in the source's checkpoint folder, and value v is stamped
 * start + v * 1000 / rowsPerSecond, so any offset range replays to the same rows.
 */
import { existsSync } from 'node:fs';
import type { InputSplit, Schema } from '@sluice/executor';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';
import { readVersioned, writeVersioned } from '../checkpoint/versionedFile.js';
import type { ReadLimit, StreamSource } from './Source.js';

export const RATE_SCHEMA: Schema = [
  { name: 'timestamp', type: 'timestamp', nullable: false },
  { name: 'value', type: 'long', nullable: false },
];

interface ValueOffset {
  value: number;
}

/** Contiguous value ranges [start, end) split into `parts` near-equal pieces. */
export function splitRange(start: number, end: number, parts: number): Array<[number, number]> {
  const n = end - start;
  if (n <= 0) return [];
  const k = Math.min(parts, n);
  const out: Array<[number, number]> = [];
  for (let i = 0; i < k; i++) {
    out.push([start + Math.floor((n * i) / k), start + Math.floor((n * (i + 1)) / k)]);
  }
  return out;
}

/**
 * A generated source's start time, kept in its checkpoint folder at `metaPath` under `key`: the
 * first start's (`now`, written then), read back at every later start.
 */
export function keptStartTime(metaPath: string, key: string, now: number): number {
  if (existsSync(metaPath)) return readVersioned<Record<string, number>>(metaPath)[key] as number;
  writeVersioned(metaPath, { [key]: now });
  return now;
}

export class RateSource implements StreamSource {
  readonly description: string;
  readonly schema = RATE_SCHEMA;
  private readonly startTimeMs: number;
  private pinnedValue: number | undefined;

  constructor(
    private readonly rowsPerSecond: number,
    private readonly numPartitions: number | undefined,
    /** Where it keeps the time it started at (CheckpointPaths.rateStart). */
    metaPath: string,
    now = Date.now(),
  ) {
    this.description = `RateStreamV2[rowsPerSecond=${rowsPerSecond}, numPartitions=${numPartitions ?? 'default'}]`;
    this.startTimeMs = keptStartTime(metaPath, 'startTimeMs', now);
  }

  private valueAt(nowMs: number): number {
    return Math.max(0, Math.floor(((nowMs - this.startTimeMs) * this.rowsPerSecond) / 1000));
  }

  prepareForAvailableNow(): void {
    this.pinnedValue = this.valueAt(Date.now());
  }

  async latestOffset(start: SourceOffset | null, _limit: ReadLimit): Promise<SourceOffset | null> {
    const from = start === null ? 0 : (start as ValueOffset).value;
    const to = Math.max(from, this.pinnedValue ?? this.valueAt(Date.now()));
    return to === 0 ? null : { value: to };
  }

  planSplits(start: SourceOffset | null, end: SourceOffset, slots: number): InputSplit[] {
    const from = start === null ? 0 : (start as ValueOffset).value;
    const to = (end as ValueOffset).value;
    return splitRange(from, to, this.numPartitions ?? slots).map(([startValue, endValue]) => ({
      type: 'rate',
      startValue,
      endValue,
      rowsPerSecond: this.rowsPerSecond,
      startTimeMs: this.startTimeMs,
    }));
  }
}
