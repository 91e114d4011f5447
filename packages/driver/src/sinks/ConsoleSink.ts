/** `console` sink: prints each batch as a table, like Spark's console sink. */
import { createCast, type Row, type Schema, type TaskOutput } from '@sluice/executor';
import type { BatchOutput, StreamSink } from './Sink.js';


function show(value: unknown, type: Schema[number]['type'], truncate: boolean): string {
  let s: string;
  if (value === null || value === undefined) s = 'NULL';
  else if (type === 'timestamp') s = new Date(value as number).toISOString();
  else if (type === 'date' || (typeof type === 'object' && !('struct' in type))) s = String(createCast(type, 'string')?.(value));
  else if (typeof value === 'object') s = JSON.stringify(value);
  else s = String(value);
  return truncate && s.length > 20 ? `${s.slice(0, 17)}...` : s;
}

export function formatTable(rows: Row[], schema: Schema, numRows: number, truncate: boolean): string {
  const shown = rows.slice(0, numRows);
  const cells = shown.map((r) => schema.map((f) => show(r[f.name], f.type, truncate)));
  const widths = schema.map((f, i) => Math.max(f.name.length, ...cells.map((c) => (c[i] as string).length)));
  const sep = `+${widths.map((w) => '-'.repeat(w)).join('+')}+`;
  const line = (vals: string[]): string => `|${vals.map((v, i) => v.padStart(widths[i] as number)).join('|')}|`;
  const out = [sep, line(schema.map((f) => f.name)), sep, ...cells.map(line), sep];
  if (rows.length > numRows) out.push(`only showing top ${numRows} row${numRows === 1 ? '' : 's'}`);
  return out.join('\n');
}

export class ConsoleSink implements StreamSink {
  readonly description = 'ConsoleSink';
  private lastBatch = -1;

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
    const bar = '-------------------------------------------';
    this.write(`${bar}\nBatch: ${out.batchId}\n${bar}\n${formatTable(out.rows, out.schema, this.numRows, this.truncate)}\n\n`);
    this.lastBatch = out.batchId;
  }
}
