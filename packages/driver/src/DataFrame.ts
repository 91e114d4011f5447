/**
 * A DataFrame is a source plus a chain of stateless operators. Every operator is checked against
 * the schema when it is called, so an unknown column fails at the line that names it.
 */
import { planOutputSchema, type Expr, type Op, type Row, type Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Column, toColumn } from './Column.js';
import type { Session } from './Session.js';
import type { SourceSpec } from './sources/resolveSource.js';
import { DataStreamWriter } from './DataStreamWriter.js';
import { parseDuration } from './units.js';

export interface LogicalPlan {
  source: SourceSpec;
  ops: Op[];
}

/** The operator chain without withWatermark markers, whose schema effect is nil. */
export function schemaOps(ops: Op[]): Op[] {
  return ops.filter((o) => o.kind !== 'watermark');
}

export class DataFrame {
  readonly schema: Schema;

  constructor(
    readonly session: Session,
    readonly plan: LogicalPlan,
    readonly isStreaming: boolean,
  ) {
    this.schema = planOutputSchema(schemaOps(plan.ops), plan.source.schema);
  }

  get columns(): string[] {
    return this.schema.map((f) => f.name);
  }

  private with(op: Op): DataFrame {
    return new DataFrame(this.session, { ...this.plan, ops: [...this.plan.ops, op] }, this.isStreaming);
  }

  select(...cols: Array<Column | string>): DataFrame {
    const exprs: Expr[] = cols.flatMap((c) =>
      c === '*' ? this.schema.map((f): Expr => ({ op: 'col', name: f.name })) : [toColumn(c).expr],
    );
    return this.with({ kind: 'project', exprs });
  }

  filter(condition: Column): DataFrame {
    return this.with({ kind: 'filter', cond: condition.expr });
  }

  where(condition: Column): DataFrame {
    return this.filter(condition);
  }

  /** Replaces the column of that name in place, or appends it (Spark's withColumn). */
  withColumn(name: string, column: Column): DataFrame {
    const named: Expr = { op: 'alias', expr: column.expr, name };
    const exprs: Expr[] = this.schema.map((f): Expr => (f.name === name ? named : { op: 'col', name: f.name }));
    if (!this.schema.some((f) => f.name === name)) exprs.push(named);
    return this.with({ kind: 'project', exprs });
  }

  withWatermark(eventTime: string, delayThreshold: string | number): DataFrame {
    const field = this.schema.find((f) => f.name === eventTime);
    if (!field) {
      throw new SluiceError('UNRESOLVED_COLUMN', `withWatermark: no column ${eventTime}; columns: ${this.columns.join(', ')}`, {
        column: eventTime,
      });
    }
    if (field.type !== 'timestamp') {
      throw new SluiceError('INVALID_EVENT_TIME_COLUMN', `withWatermark: column ${eventTime} must be a TIMESTAMP`, {
        column: eventTime,
      });
    }
    const delayMs = parseDuration(delayThreshold, 'delayThreshold');
    return this.with({ kind: 'watermark', column: eventTime, delayMs });
  }

  get writeStream(): DataStreamWriter {
    if (!this.isStreaming) {
      throw new SluiceError('NOT_STREAMING', "writeStream needs a streaming DataFrame (from session.readStream); use collect() on a static one");
    }
    return new DataStreamWriter(this);
  }

  /** Runs a static DataFrame and returns its rows as JavaScript values. */
  async collect(): Promise<Array<Record<string, unknown>>> {
    if (this.isStreaming) {
      throw new SluiceError('NOT_STATIC', 'collect() needs a static DataFrame (from session.read); start a streaming one with writeStream');
    }
    return this.session.collectStatic(this);
  }
}

export type { Row };
