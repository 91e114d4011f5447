/**
 * The table-driven scalar functions, math, strings and collections: a call of one of these names is typed and
 * compiled from its entry (exprTypes.ts, compileExpr.ts); the functions older than the tables
 * (upper, lower, length, trim, concat, substring, coalesce) keep their own cases there.
 */
import { MATH_FUNCTIONS, type MathFunctionName, type ScalarFunction } from './mathFunctions.js';
import { STRING_FUNCTIONS, type StringFunctionName } from './stringFunctions.js';
import { COLLECTION_FUNCTIONS, type CollectionFunctionName } from './collectionFunctions.js';
import { DATETIME_FUNCTIONS, type DatetimeFunctionName } from './datetimeFunctions.js';
import { JSON_FUNCTIONS, type JsonFunctionName } from './jsonFunctions.js';
import { MISC_FUNCTIONS, type MiscFunctionName } from './miscFunctions.js';

export type { ScalarFunction };
export type ScalarFunctionName = MathFunctionName | StringFunctionName | CollectionFunctionName | DatetimeFunctionName | JsonFunctionName | MiscFunctionName;

export const SCALAR_FUNCTIONS: Record<ScalarFunctionName, ScalarFunction> = {
  ...MATH_FUNCTIONS,
  ...STRING_FUNCTIONS,
  ...COLLECTION_FUNCTIONS,
  ...DATETIME_FUNCTIONS,
  ...JSON_FUNCTIONS,
  ...MISC_FUNCTIONS,
};

export function isScalarFunction(fn: string): fn is ScalarFunctionName {
  return Object.hasOwn(SCALAR_FUNCTIONS, fn);
}
