/**
 * The whole state-task suite again, with every aggregation on the general (object) path of
 * stateTask.ts instead of the cell path of compactAggregate.ts.
 */
import { afterAll, beforeAll } from 'vitest';
import { useGeneralAggregatePath } from './stateTask.js';
import './stateTask.test.js';

beforeAll(() => useGeneralAggregatePath(true));
afterAll(() => useGeneralAggregatePath(false));
