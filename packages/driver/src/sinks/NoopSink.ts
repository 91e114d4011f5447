/**
 * `noop` (Spark's NoopDataSource): the batch's tasks run to the end and count their rows, and the
 * rows go nowhere. For measuring a query without a sink's cost.
 */
import type { TaskOutput } from '@sluice/executor';
import type { StreamSink } from './Sink.js';

export class NoopSink implements StreamSink {
  readonly description = 'NoopSink';

  taskOutput(): TaskOutput {
    return { type: 'discard' };
  }

  isCommitted(): boolean {
    return false;
  }

  async addBatch(): Promise<void> {}
}
