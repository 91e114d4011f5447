/**
 * User functions: each worker imports a udf's module once and keeps the named exports in a
 * UdfRegistry, which compileExpr reads from.
 */
import { SluiceError } from '@sluice/state';
import { walkExpr } from './exprTree.js';
import type { Expr } from './types.js';
import type { DataType } from '../schema/types.js';
import { createStrictConverter, typeName } from '../schema/values.js';
import type { Op } from '../operators/types.js';

export type UdfFunction = (...args: unknown[]) => unknown;
/** Loaded user functions of one worker, keyed by udfKey(moduleUrl, exportName). */
export type UdfRegistry = Map<string, UdfFunction>;

export function udfKey(moduleUrl: string, exportName: string): string {
  return `${moduleUrl}#${exportName}`;
}

/** Module namespaces by URL: a worker imports each udf module once, whatever the number of tasks. */
const udfModules = new Map<string, Promise<Record<string, unknown>>>();

type UdfExpr = Extract<Expr, { op: 'udf' }>;

function collectUdfs(expr: Expr, out: UdfExpr[]): void {
  walkExpr(expr, (e) => {
    if (e.op === 'udf') out.push(e);
  });
}

export function importUdfModule(moduleUrl: string): Promise<Record<string, unknown>> {
  let loading = udfModules.get(moduleUrl);
  if (loading === undefined) {
    loading = (import(moduleUrl) as Promise<Record<string, unknown>>).catch((cause: unknown) => {
      // Forget the failure so that a retried task imports again (the file may have appeared).
      udfModules.delete(moduleUrl);
      const why = cause instanceof Error ? cause.message : String(cause);
      throw new SluiceError('UDF_NOT_FOUND', `cannot import udf module ${moduleUrl}: ${why}`, { file: moduleUrl, cause });
    });
    udfModules.set(moduleUrl, loading);
  }
  return loading;
}

/** The udf calls in `exprsOrOps`, operators' expressions included. */
export function udfsIn(exprsOrOps: Expr | Op | ReadonlyArray<Expr | Op>): UdfExpr[] {
  const udfs: UdfExpr[] = [];
  const nodes: ReadonlyArray<Expr | Op> = Array.isArray(exprsOrOps) ? exprsOrOps : [exprsOrOps as Expr | Op];
  for (const node of nodes) {
    if (!('kind' in node)) collectUdfs(node, udfs);
    else if (node.kind === 'filter') collectUdfs(node.cond, udfs);
    else if (node.kind === 'project') for (const e of node.exprs) collectUdfs(e, udfs);
    else if (node.kind === 'join' && node.residual) collectUdfs(node.residual, udfs);
    else if (node.kind === 'generate') collectUdfs(node.expr, udfs);
  }
  return udfs;
}

/**
 * Imports the module of every udf in `exprsOrOps` (once per worker) and registers the named
 * exports in `registry`. A missing module or export is a UDF_NOT_FOUND error.
 */
export async function loadUdfs(exprsOrOps: Expr | Op | ReadonlyArray<Expr | Op>, registry: UdfRegistry): Promise<UdfRegistry> {
  const udfs = udfsIn(exprsOrOps);
  await Promise.all(
    udfs.map(async ({ moduleUrl, exportName }) => {
      const key = udfKey(moduleUrl, exportName);
      if (registry.has(key)) return;
      const mod = await importUdfModule(moduleUrl);
      const fn = mod[exportName];
      if (typeof fn !== 'function') {
        throw new SluiceError('UDF_NOT_FOUND', `udf module ${moduleUrl} has no exported function '${exportName}'`, { file: moduleUrl });
      }
      registry.set(key, fn as UdfFunction);
    }),
  );
  return registry;
}

/** A value as error messages show it: its kind, and a short form of it. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (v instanceof Date) return 'a Date';
  if (Array.isArray(v)) return 'an array';
  const t = typeof v;
  const shown = t === 'string' ? `'${String(v).slice(0, 40)}'` : t === 'object' ? '' : ` ${String(v)}`;
  return `${t === 'object' ? 'an object' : `a ${t}`}${t === 'object' ? '' : ` (${shown.trim()})`}`;
}

/**
 * The engine value of a udf's result, which must be of its declared type (createStrictConverter;
 * a LONG one JavaScript holds exactly, |v| <= 2^53 - 1). Anything else is UDF_RESULT_TYPE_MISMATCH
 * naming the udf and both types, never a silent null.
 */
export function udfResultConverter(type: DataType, udf: { moduleUrl: string; exportName: string }): (v: unknown) => unknown {
  return createStrictConverter(type, (v, expected, field) => {
    throw new SluiceError(
      'UDF_RESULT_TYPE_MISMATCH',
      `udf '${udf.exportName}' of ${udf.moduleUrl} returned ${describeValue(v)}${field ? ` in field ${field}` : ''}, not ${typeName(expected)}` +
        (field ? ` (its declared type is ${typeName(type)})` : ' (its declared type)'),
      { file: udf.moduleUrl },
    );
  });
}

/**
 * What a udf threw is the user's error, not a worker's fault: UDF_FAILED naming the udf, with the
 * user's error as its cause, so the task is not retried (it would throw again).
 */
export function udfFailed(e: unknown, udf: { moduleUrl: string; exportName: string }): SluiceError {
  const why = e instanceof Error ? e.message : String(e);
  return new SluiceError('UDF_FAILED', `udf '${udf.exportName}' of ${udf.moduleUrl} threw: ${why}`, { file: udf.moduleUrl, cause: e });
}
