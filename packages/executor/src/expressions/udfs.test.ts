import { describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/state';
import { compileExpr } from './compileExpr.js';
import { bin, col, JAN_1_2024, lit, SCHEMA, thrown } from './exprTestKit.js';
import type { Expr } from './types.js';
import type { DataType, Row } from '../schema/types.js';
import { loadUdfs, udfKey, type UdfRegistry } from './udfs.js';

describe('udf', () => {
  const fixtures = new URL('../../../../test/fixtures/udfs.mjs', import.meta.url).href;
  const udf = (exportName: string, returnType: DataType, ...args: Expr[]): Expr => ({ op: 'udf', moduleUrl: fixtures, exportName, returnType, args });

  async function run(expr: Expr, row: Row): Promise<unknown> {
    const registry = await loadUdfs([expr], new Map());
    return compileExpr(expr, SCHEMA, registry)(row);
  }

  it('calls the named export of the module', async () => {
    expect(await run(udf('double', 'double', col('v')), { v: 21 })).toBe(42);
    expect(await run(udf('double', 'double', col('v')), { v: null })).toBeNull();
  });

  it('hands timestamps to user code as Dates and takes Dates back as epoch ms', async () => {
    expect(await run(udf('isoDay', 'string', col('ts')), { ts: JAN_1_2024 })).toBe('2024-01-01');
    expect(await run(udf('addDays', 'timestamp', col('ts'), lit(1)), { ts: JAN_1_2024 })).toBe(JAN_1_2024 + 86_400_000);
  });

  it('refuses a result that does not match the declared type, naming the udf and both types', async () => {
    await expect(run(udf('isoDay', 'double', col('ts')), { ts: JAN_1_2024 })).rejects.toMatchObject({
      code: 'UDF_RESULT_TYPE_MISMATCH',
      file: fixtures,
      message: `udf 'isoDay' of ${fixtures} returned a string ('2024-01-01'), not DOUBLE (its declared type)`,
    });
    await expect(run(udf('double', 'int', col('v')), { v: 0.25 })).rejects.toMatchObject({ code: 'UDF_RESULT_TYPE_MISMATCH' });
    await expect(run(udf('double', 'long', col('v')), { v: 2 ** 53 })).rejects.toMatchObject({ code: 'UDF_RESULT_TYPE_MISMATCH' });
    await expect(run(udf('double', 'string', col('v')), { v: 2 })).rejects.toMatchObject({
      message: expect.stringContaining('returned a number (4), not STRING (its declared type)'),
    });
    const struct: DataType = { struct: [{ name: 'a', type: 'int', nullable: true }] };
    await expect(run(udf('addDays', struct, col('ts'), lit(1)), { ts: JAN_1_2024 })).rejects.toMatchObject({
      message: expect.stringContaining('returned a Date, not STRUCT<a: INT> (its declared type)'),
    });
    await expect(run(udf('wrap', struct, col('id')), { id: 'x' })).rejects.toMatchObject({
      message: expect.stringContaining("returned a string ('x') in field a, not INT (its declared type is STRUCT<a: INT>)"),
    });
    // Values of the declared type pass: an integral double for INT, a Date or epoch ms for TIMESTAMP.
    expect(await run(udf('double', 'int', col('v')), { v: 21 })).toBe(42);
    expect(await run(udf('double', 'timestamp', col('v')), { v: 5 })).toBe(10);
  });

  it('reads undefined from a udf as null', async () => {
    expect(await run(udf('nothing', 'string'), {})).toBeNull();
  });

  it('runs on the calling thread (0 on the main thread)', async () => {
    expect(await run(udf('threadId', 'long'), {})).toBe(0);
  });

  it('turns an error thrown by user code into UDF_FAILED naming the udf, with the error as cause', async () => {
    const e = await run(udf('fail', 'double'), {}).catch((x: unknown) => x as SluiceError);
    expect(e).toBeInstanceOf(SluiceError);
    expect(e).toMatchObject({ code: 'UDF_FAILED', file: fixtures, message: `udf 'fail' of ${fixtures} threw: udf failed on purpose` });
    expect((e as SluiceError).cause).toMatchObject({ message: 'udf failed on purpose' });
    // Two arguments and more take the same path.
    await expect(run(udf('fail', 'double', col('v'), col('v')), { v: 1 })).rejects.toMatchObject({ code: 'UDF_FAILED' });
  });

  it('rejects a promise result with UDF_ASYNC_RESULT', async () => {
    await expect(run(udf('later', 'double', col('v')), { v: 1 })).rejects.toMatchObject({ code: 'UDF_ASYNC_RESULT' });
  });

  it('registers each udf once under moduleUrl#exportName, for ops too', async () => {
    const registry: UdfRegistry = new Map();
    await loadUdfs([{ kind: 'filter', cond: bin('gt', udf('double', 'double', col('v')), lit(1)) }], registry);
    expect([...registry.keys()]).toEqual([udfKey(fixtures, 'double')]);
  });

  it('loads a udf under a window, whose time it computes', async () => {
    const e: Expr = { op: 'window', expr: udf('addDays', 'timestamp', col('ts'), lit(1)), sizeMs: 86_400_000, slideMs: 86_400_000, startMs: 0 };
    expect(await run(e, { ts: JAN_1_2024 + 5 })).toEqual({ start: JAN_1_2024 + 86_400_000, end: JAN_1_2024 + 2 * 86_400_000 });
  });

  it('imports a module once per worker', async () => {
    const source = 'globalThis.__sluiceUdfLoads = (globalThis.__sluiceUdfLoads ?? 0) + 1; export const one = () => 1;';
    const url = `data:text/javascript,${encodeURIComponent(source)}`;
    const e: Expr = { op: 'udf', moduleUrl: url, exportName: 'one', returnType: 'long', args: [] };
    await loadUdfs(e, new Map());
    const registry = await loadUdfs(e, new Map());
    expect(compileExpr(e, SCHEMA, registry)({})).toBe(1);
    expect((globalThis as { __sluiceUdfLoads?: number }).__sluiceUdfLoads).toBe(1);
  });

  it('fails with UDF_NOT_FOUND for a missing module, export or non-function', async () => {
    const missingModule = { ...udf('double', 'double'), moduleUrl: new URL('./no-such-udfs.mjs', fixtures).href } as Expr;
    await expect(loadUdfs(missingModule, new Map())).rejects.toMatchObject({ code: 'UDF_NOT_FOUND' });
    await expect(loadUdfs(udf('noSuchExport', 'double'), new Map())).rejects.toMatchObject({ code: 'UDF_NOT_FOUND' });
    await expect(loadUdfs(udf('notAFunction', 'double'), new Map())).rejects.toMatchObject({ code: 'UDF_NOT_FOUND' });
  });

  it('fails with UDF_NOT_FOUND when compiled before loading', () => {
    expect(thrown(() => compileExpr(udf('double', 'double', col('v')), SCHEMA, new Map())).code).toBe('UDF_NOT_FOUND');
  });
});
