/**
 * Builds the Spark-shaped StreamingQueryProgress of each batch and keeps the recent ones.
 */
import type { StateOperatorProgress, StreamingQueryProgress } from '../events/progress.js';

export interface BatchFacts {
  batchId: number;
  triggerStartMs: number;
  durationMs: Record<string, number>;
  sources: Array<{
    description: string;
    startOffset: unknown;
    endOffset: unknown;
    latestOffset: unknown;
    numInputRows: number;
    metrics?: Record<string, string>;
  }>;
  eventTime?: { min: number; max: number; avg: number };
  watermarkMs?: number;
  sink: { description: string; numOutputRows: number };
  stateOperators?: StateOperatorProgress[];
  shuffle?: StreamingQueryProgress['shuffle'];
}

const RECENT = 100;

function rate(rows: number, ms: number): number {
  return ms > 0 ? (rows * 1000) / ms : 0;
}

export class ProgressReporter {
  readonly recent: StreamingQueryProgress[] = [];
  private lastTriggerStartMs: number | undefined;

  constructor(
    private readonly id: string,
    private readonly runId: string,
    private readonly name: string | null,
    private readonly schedulerPool: string,
  ) {}

  get last(): StreamingQueryProgress | null {
    return this.recent.at(-1) ?? null;
  }

  report(f: BatchFacts): StreamingQueryProgress {
    const processingMs = f.durationMs.triggerExecution ?? 0;
    // Input rate is over the time since the previous trigger started, as in Spark.
    const sinceLast = this.lastTriggerStartMs === undefined ? processingMs : f.triggerStartMs - this.lastTriggerStartMs;
    this.lastTriggerStartMs = f.triggerStartMs;
    const numInputRows = f.sources.reduce((s, x) => s + x.numInputRows, 0);
    const eventTime: Record<string, string> = {};
    if (f.eventTime) {
      eventTime.avg = new Date(f.eventTime.avg).toISOString();
      eventTime.max = new Date(f.eventTime.max).toISOString();
      eventTime.min = new Date(f.eventTime.min).toISOString();
    }
    if (f.watermarkMs !== undefined) eventTime.watermark = new Date(f.watermarkMs).toISOString();
    const progress: StreamingQueryProgress = {
      id: this.id,
      runId: this.runId,
      name: this.name,
      schedulerPool: this.schedulerPool,
      timestamp: new Date(f.triggerStartMs).toISOString(),
      batchId: f.batchId,
      batchDuration: processingMs,
      numInputRows,
      inputRowsPerSecond: rate(numInputRows, sinceLast),
      processedRowsPerSecond: rate(numInputRows, processingMs),
      durationMs: f.durationMs,
      eventTime,
      stateOperators: f.stateOperators ?? [],
      sources: f.sources.map((s) => ({
        ...s,
        inputRowsPerSecond: rate(s.numInputRows, sinceLast),
        processedRowsPerSecond: rate(s.numInputRows, processingMs),
      })),
      sink: f.sink,
      ...(f.shuffle && { shuffle: f.shuffle }),
    };
    this.recent.push(progress);
    if (this.recent.length > RECENT) this.recent.shift();
    return progress;
  }
}
