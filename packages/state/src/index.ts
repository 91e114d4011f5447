export { SluiceError, isSluiceError } from './errors.js';
export type { SerializedError, SluiceErrorDetails } from './errors.js';
export { fault, FAULT_POINTS } from './faults.js';
