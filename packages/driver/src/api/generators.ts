/**
 * A select item that is a generator (explode, posexplode, inline and their `_outer` forms), as
 * Spark plans it: a Generate operator that adds the generated columns to each row, then the
 * projection of the select, where the generator's item stands for its columns.
 */
import { generatorFields, GENERATORS, type Expr, type GeneratorName, type Op, type Schema, exprType } from '@sluice/executor';
import { SluiceError } from '@sluice/state';

function generatorCall(e: Expr): { fn: GeneratorName; arg: Expr; names?: string[] } | undefined {
  const inner = e.op === 'alias' ? e.expr : e;
  if (inner.op !== 'call' || !GENERATORS.includes(inner.fn as GeneratorName)) return undefined;
  const names = e.op === 'alias' ? (e.names ?? [e.name]) : undefined;
  return { fn: inner.fn as GeneratorName, arg: inner.args[0] as Expr, ...(names !== undefined && { names }) };
}

/** The generate operator and the projection after it, when one select item is a generator. */
export function generatorOf(exprs: Expr[], schema: Schema): { op: Extract<Op, { kind: 'generate' }>; exprs: Expr[] } | undefined {
  const found = exprs.map(generatorCall);
  const at = found.findIndex((g) => g !== undefined);
  if (at < 0) return undefined;
  if (found.filter((g) => g !== undefined).length > 1) {
    throw new SluiceError('UNSUPPORTED_OPERATION', '[UNSUPPORTED_GENERATOR.MULTI_GENERATOR] only one generator is allowed per select clause');
  }
  const g = found[at]!;
  const fields = generatorFields(g.fn, exprType(g.arg, schema), g.arg);
  const names = g.names ?? fields.map((f) => f.name);
  if (names.length !== fields.length) {
    throw new SluiceError(
      'INVALID_EXPRESSION',
      `${g.fn} gives ${fields.length} columns (${fields.map((f) => f.name).join(', ')}), so it takes ${fields.length} alias names, not ${names.length}`,
    );
  }
  // The generated columns travel under names no input column has, and take theirs in the projection.
  const taken = new Set(schema.map((f) => f.name.toLowerCase()));
  const hidden = names.map((n) => {
    let h = `__generated_${n}`;
    while (taken.has(h.toLowerCase())) h = `_${h}`;
    taken.add(h.toLowerCase());
    return h;
  });
  const columns = names.map((name, i): Expr => ({ op: 'alias', expr: { op: 'col', name: hidden[i]! }, name }));
  return {
    op: { kind: 'generate', fn: g.fn, expr: g.arg, names: hidden },
    exprs: [...exprs.slice(0, at), ...columns, ...exprs.slice(at + 1)],
  };
}
