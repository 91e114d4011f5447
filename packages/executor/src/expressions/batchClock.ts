/**
 * The timestamp of the batch a worker thread is running: current_timestamp(), now() and
 * current_date() read it, so every row of a batch gets the same value, and a replayed batch the
 * value its offsets entry recorded (Spark's rule). A worker runs one task at a time; the task entry
 * sets it from the task (worker.ts).
 */
let batchTimestampMs = Date.now();

export function setBatchTimestamp(ms: number): void {
  batchTimestampMs = ms;
}

export function batchTimestamp(): number {
  return batchTimestampMs;
}
