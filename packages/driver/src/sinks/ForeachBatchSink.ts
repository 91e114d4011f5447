/**
 * `foreachBatch(fn)`: the user's function runs on the driver with the batch's rows (JavaScript
 * values) and its id. As in Spark it is at-least-once: a batch replayed after a crash is passed
 * again with the same id, which the function can use to deduplicate.
 */
import { rowToExternal, type Row, type TaskOutput } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { BatchOutput, StreamSink } from './Sink.js';

/** The function of `writeStream.foreachBatch`: a batch's rows and its id; a promise it returns is awaited. */
export type ForeachBatchFunction = (rows: Row[], batchId: number) => unknown;

export class ForeachBatchSink implements StreamSink {
  readonly description = 'ForeachBatchSink';

  constructor(private readonly fn: ForeachBatchFunction) {}

  taskOutput(): TaskOutput {
    return { type: 'collect' };
  }

  isCommitted(): boolean {
    return false;
  }

  async addBatch(out: BatchOutput): Promise<void> {
    const rows = out.rows.map((r) => rowToExternal(r, out.schema));
    try {
      await this.fn(rows, out.batchId);
    } catch (e) {
      // The user's function failed, not the engine: say which, and keep what it threw.
      const name = this.fn.name ? `foreachBatch function ${this.fn.name}` : 'the foreachBatch function';
      throw new SluiceError('FOREACH_BATCH_FAILED', `${name} threw on batch ${out.batchId}: ${(e as Error)?.message ?? String(e)}`, {
        option: 'foreachBatch',
        cause: e,
      });
    }
  }
}
