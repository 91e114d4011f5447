/**
 * Reduce side of a stateful batch (StateTask in messages.ts): merges shuffle blocks into the
 * shard's state, drops late rows, evicts, emits rows by output mode and commits the shard.
 *
 * PLACEHOLDER: the reduce side is being written separately. Until then a state task fails with a
 * coded error, so a stateful query ends cleanly instead of being retried.
 */
import { SluiceError } from '@sluice/state';
import type { StateTask, TaskResult } from './messages.js';

export async function runStateTask(_task: StateTask): Promise<TaskResult> {
  throw new SluiceError('UNSUPPORTED_OPERATION', 'state tasks are not wired yet');
}
