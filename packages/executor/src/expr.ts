/**
 * The expression API in one place, for existing imports: typing and names (exprTypes.ts,
 * exprNames.ts), compilation (compileExpr.ts, compileOps.ts) and user functions (udfs.ts).
 */
export { compileExpr, type Evaluator } from './compileExpr.js';
export { compileOps, type CompiledOps } from './compileOps.js';
export { exprName, exprSql } from './exprNames.js';
export { exprNullable, exprType, planOutputSchema } from './exprTypes.js';
export { sparkSubstring } from './sparkStrings.js';
export { loadUdfs, udfKey, type UdfFunction, type UdfRegistry } from './udfs.js';
