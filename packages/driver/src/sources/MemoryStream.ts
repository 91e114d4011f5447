/**
 * An in-process source for tests and demos (Spark's MemoryStream): `addData` appends rows, and an
 * offset is a row count. Replayable within the process only, as in Spark.
 */
import { encodeRows, rowToInternal, type InputSplit, type Row, type Schema } from '@sluice/executor';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';
import { splitRange } from './RateSource.js';
import type { ReadLimit, StreamSource } from './Source.js';

interface CountOffset {
  offset: number;
}

/**
 * An in-process input stream for tests and demos (Spark's MemoryStream), from
 * `session.memoryStream(name, schema)` and read by `readStream.format('memory').load(name)`.
 * `addData` appends rows; an offset is a row count. Replayable within the process only, as in Spark.
 */
export class MemoryStream {
  private readonly rows: Row[] = [];

  /** @internal */
  constructor(
    /** The stream's name, as `load(name)` reads it. */
    readonly name: string,
    /** The schema its rows have. */
    readonly schema: Schema,
  ) {}

  /** Appends rows (plain objects; timestamps as Date, ISO string or epoch ms). Returns the new offset. */
  addData(rows: Array<Record<string, unknown>>): number {
    for (const r of rows) this.rows.push(rowToInternal(r, this.schema));
    return this.rows.length;
  }

  /** The rows added so far (the latest offset). */
  get size(): number {
    return this.rows.length;
  }

  /** @internal The rows of offsets [from, to), in engine form. */
  slice(from: number, to: number): Row[] {
    return this.rows.slice(from, to);
  }
}

export class MemoryStreamSource implements StreamSource {
  readonly description: string;
  readonly schema: Schema;
  private pinned: number | undefined;

  constructor(private readonly stream: MemoryStream) {
    this.description = `MemoryStream[${stream.name}]`;
    this.schema = stream.schema;
  }

  prepareForAvailableNow(): void {
    this.pinned = this.stream.size;
  }

  async latestOffset(_start: SourceOffset | null, _limit: ReadLimit): Promise<SourceOffset | null> {
    const n = this.pinned ?? this.stream.size;
    return n === 0 ? null : { offset: n };
  }

  planSplits(start: SourceOffset | null, end: SourceOffset, slots: number): InputSplit[] {
    const from = start === null ? 0 : (start as CountOffset).offset;
    return splitRange(from, (end as CountOffset).offset, slots).map(([a, b]) => ({
      type: 'rows',
      data: encodeRows(this.stream.slice(a, b)),
    }));
  }
}
