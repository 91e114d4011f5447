/**
 * The harness of the ports of Spark's streaming suites (spark-stream-join.test.ts,
 * spark-multi-stateful.test.ts, spark-session-window.test.ts): Spark's StreamTest actions
 * (AddData, MultiAddData, CheckAnswer, CheckNewAnswer, StopStream / StartStream) over one query
 * writing to a memory sink (append mode unless a suite asks for another), and memory streams
 * named apart from every other of the file. Each suite adds its own metric
 * assertions, read from progress as that suite's helpers read them.
 */
import { expect } from 'vitest';
import { Trigger, type DataFrame, type ManualClock, type MemoryStream, type Session, type StreamingQuery } from '@sluice/driver';
import { sleep, tempDir, withSession } from './helpers.js';

/** Spark's StreamTest runs with 5 shuffle partitions. */
export const SPARK_TEST_CONF = { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 5 };

export type Values = unknown[];

let uniq = 0;
/** A name no other memory stream or query of the process has. */
export const fresh = (what: string): string => `${what}_${++uniq}`;

/** A sink value as compared: a timestamp by its instant, a BIGINT as a number. */
function norm(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'bigint') return Number(v);
  return v;
}

/** Rows as a sorted multiset, each row the list of its values in column order. */
export const multiset = (rows: Values[]): string[] => rows.map((r) => JSON.stringify(r.map(norm))).sort();

/** A memory stream of columns `ddl` and its streaming DataFrame. */
export function memoryStream(s: Session, ddl = 'value INT'): [MemoryStream, DataFrame] {
  const name = fresh('in');
  const m = s.memoryStream(name, ddl);
  return [m, s.readStream.format('memory').load(name)];
}

/** AddData(input, v1, v2, ...) of a MemoryStream[Int] (column `value`). */
export const add = (m: MemoryStream, ...values: Array<number | null>): number => m.addData(values.map((value) => ({ value })));

/** AddData(input, (a, b), ...) of a tuple stream whose columns are `names`. */
export const addTuples = (m: MemoryStream, names: string[], ...tuples: unknown[][]): number =>
  m.addData(tuples.map((t) => Object.fromEntries(names.map((n, i) => [n, t[i]]))));

/** Spark's StreamTest actions over one query with a memory sink. */
export class SparkStreamTest {
  private q: StreamingQuery | undefined;
  /** The memory sink's query name. */
  readonly name = fresh('out');
  private readonly ckpt = tempDir();
  /** Sink rows already checked (CheckAnswer / CheckNewAnswer). */
  private seen = 0;

  /**
   * `mode`: the query's output mode (Spark's testStream(df, OutputMode.X)). `clock`: Spark's
   * StartStream(ProcessingTime("1 second"), triggerClock = clock): the query triggers every second
   * of that manual clock, and `advance` moves it (AdvanceManualClock).
   */
  constructor(
    private readonly s: Session,
    private readonly df: DataFrame,
    private readonly mode: 'append' | 'complete' | 'update' = 'append',
    private readonly clock?: ManualClock,
  ) {}

  get query(): StreamingQuery {
    if (this.q === undefined) throw new Error('the query is not started');
    return this.q;
  }

  async start(): Promise<this> {
    const writer = this.df.writeStream.format('memory').queryName(this.name).outputMode(this.mode).option('checkpointLocation', this.ckpt);
    if (this.clock) writer.trigger(Trigger.ProcessingTime('1 second'), { clock: this.clock });
    this.q = await writer.start();
    // The first trigger has run and the query waits for the clock (Spark's StreamManualClock.isStreamWaitingAt).
    await this.clock?.allWaiting();
    this.started();
    return this;
  }

  /** AdvanceManualClock(ms): the query runs the triggers that come due. */
  async advance(ms: number): Promise<void> {
    if (!this.clock) throw new Error('the test has no manual clock');
    await this.clock.advance(ms);
  }

  /** Told when the query (re)starts. */
  protected started(): void {}

  async stop(): Promise<void> {
    await this.q?.stop();
  }

  /** StopStream, StartStream(). */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** MultiAddData: every add runs between two triggers of the query, so one batch reads them all. */
  async multiAdd(...adds: Array<() => void>): Promise<void> {
    // Checked and added in one synchronous step: the query reads its sources' offsets only after
    // marking its trigger active, so none of them can be read between two of these adds.
    for (;;) {
      if (!this.query.status.isTriggerActive) {
        for (const a of adds) a();
        return;
      }
      await sleep(1);
    }
  }

  protected async processAll(): Promise<void> {
    // On a manual clock, `advance` has already waited for the triggers it made due.
    if (!this.clock) await this.query.processAllAvailable();
    if (this.query.exception) throw this.query.exception;
  }

  private async sinkRows(): Promise<Values[]> {
    return (await this.s.memoryTable(this.name)).map((r) => Object.values(r));
  }

  /** What the progresses said, for a failure's message. */
  protected trace(): string {
    return JSON.stringify(
      this.query.recentProgress.map((p) => ({
        batchId: p.batchId,
        rows: p.numInputRows,
        watermark: p.eventTime.watermark,
        ops: p.stateOperators.map((o) => [o.operatorName, o.numRowsTotal, o.numRowsUpdated, o.numRowsDroppedByWatermark]),
      })),
    );
  }

  /** CheckAnswer: every row written so far. */
  async checkAnswer(...expected: Values[]): Promise<void> {
    await this.processAll();
    const rows = await this.sinkRows();
    this.seen = rows.length;
    expect(multiset(rows), `CheckAnswer; progress: ${this.trace()}`).toEqual(multiset(expected));
  }

  /** CheckNewAnswer: the rows written since the last check (complete mode: the last batch's, the whole result). */
  async checkNewAnswer(...expected: Values[]): Promise<void> {
    await this.processAll();
    const rows = await this.sinkRows();
    const newRows = this.mode === 'complete' ? rows : rows.slice(this.seen);
    this.seen = rows.length;
    expect(multiset(newRows), `CheckNewAnswer; progress: ${this.trace()}`).toEqual(multiset(expected));
  }
}

/** Runs a Spark test body: a session of the suite's conf, the query started, stopped at the end. */
export async function runSparkTest<T extends SparkStreamTest>(
  make: (s: Session, df: DataFrame) => T,
  df: (s: Session) => DataFrame,
  body: (t: T) => Promise<void>,
  conf: Record<string, unknown> = {},
): Promise<void> {
  await withSession({ ...SPARK_TEST_CONF, ...conf }, async (s) => {
    const t = await make(s, df(s)).start();
    try {
      await body(t);
    } finally {
      await t.stop();
    }
  });
}
