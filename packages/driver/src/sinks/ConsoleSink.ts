/**
 * `console` sink: prints each batch as Spark's console sink does, a "Batch: N" banner and then the
 * batch as `Dataset.show(numRows, truncate)` prints it (showString in @sluice/executor).
 */
import { showString, type TaskOutput } from '@sluice/executor';
import type { BatchOutput, StreamSink } from './Sink.js';

const BAR = '-------------------------------------------';

export class ConsoleSink implements StreamSink {
  readonly description = 'ConsoleSink';
  private lastBatch = -1;

  /** `truncate`: Spark's option of the same name, true cutting cells at 20 characters. */
  constructor(
    private readonly numRows: number,
    private readonly truncate: boolean,
    private readonly write: (text: string) => void = (t) => process.stdout.write(t),
  ) {}

  taskOutput(): TaskOutput {
    return { type: 'collect' };
  }

  isCommitted(batchId: number): boolean {
    return batchId <= this.lastBatch;
  }

  async addBatch(out: BatchOutput): Promise<void> {
    const table = showString(out.rows, out.schema, { numRows: this.numRows, truncate: this.truncate ? 20 : 0 });
    // Spark println()s the banner lines and then the table, which leaves an empty line after it.
    this.write(`${BAR}\nBatch: ${out.batchId}\n${BAR}\n${table}\n`);
    this.lastBatch = out.batchId;
  }
}
