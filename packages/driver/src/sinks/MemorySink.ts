/**
 * `memory` sink: rows kept on the driver under the query name, read with
 * `session.memoryTable(name)`. Complete mode keeps only the last batch; a replayed batch id is
 * not added twice.
 */
import { rowToExternal, type Row, type Schema, type TaskOutput } from '@sluice/executor';
import type { BatchOutput, StreamSink } from './Sink.js';

export class MemorySink implements StreamSink {
  readonly description: string;
  private batches: Array<{ batchId: number; rows: Row[] }> = [];
  private schema: Schema = [];

  constructor(readonly name: string) {
    this.description = `MemorySink[${name}]`;
  }

  taskOutput(): TaskOutput {
    return { type: 'collect' };
  }

  isCommitted(batchId: number): boolean {
    const last = this.batches.at(-1);
    return last !== undefined && last.batchId >= batchId;
  }

  async addBatch(out: BatchOutput): Promise<void> {
    if (this.isCommitted(out.batchId)) return;
    this.schema = out.schema;
    if (out.outputMode === 'complete') this.batches = [];
    this.batches.push({ batchId: out.batchId, rows: out.rows });
  }

  rows(): Array<Record<string, unknown>> {
    return this.batches.flatMap((b) => b.rows.map((r) => rowToExternal(r, this.schema)));
  }
}
