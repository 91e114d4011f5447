/**
 * The state variables of a query's transformWithState processors, learned when it starts: the
 * driver imports each processor's module and runs its init with a handle that only records what
 * it declares (Spark's DriverStatefulProcessorHandleImpl). Workers then check their own init
 * against this, and the checkpoint keeps it per operator, so that a restart whose processor
 * declares a variable with another type is STATE_SCHEMA_INCOMPATIBLE, naming the variable.
 */
import { existsSync } from 'node:fs';
import { declareVariables, loadProcessor, sameVariable, udfFailed, type StateVariable, type StatefulOp, type TransformWithStateOp } from '@sluice/executor';
import { isSluiceError, SluiceError } from '@sluice/state';
import type { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { readVersioned, writeVersioned } from '../checkpoint/versionedFile.js';
import type { LogicalPlan } from './LogicalPlan.js';

type Processor = new () => { init?(handle: unknown, outputMode: string, timeMode: string): void };

async function withVariables(op: StatefulOp): Promise<StatefulOp> {
  if (op.kind !== 'transformWithState' || op.api !== 'transformWithState') return op;
  const Cls = (await loadProcessor(op)) as Processor;
  let variables: StateVariable[];
  try {
    variables = declareVariables(new Cls() as Parameters<typeof declareVariables>[0], op.outputMode, op.timeMode);
  } catch (e) {
    throw isSluiceError(e) ? e : udfFailed(e, op.processor);
  }
  return { ...op, variables };
}

/** The plan with every transformWithState operator's variables filled in. */
export async function resolveProcessors(plan: LogicalPlan): Promise<LogicalPlan> {
  if (!plan.operators) return plan;
  return { ...plan, operators: await Promise.all(plan.operators.map(async (c) => ({ ...c, stateful: await withVariables(c.stateful) }))) };
}

interface StateSchemaFile {
  variables: StateVariable[];
  /** The operator's time and output modes (absent: not recorded); a restart may not change them, as in Spark. */
  timeMode?: string;
  outputMode?: string;
}

const isSchemaFile = (v: unknown): v is StateSchemaFile => Array.isArray((v as StateSchemaFile)?.variables);

/**
 * Checks operator `operatorId`'s variables against those its checkpoint recorded, and returns the
 * record to write (undefined: nothing new). A variable of the same name with another kind or type
 * is STATE_SCHEMA_INCOMPATIBLE; new ones are added, and dropped ones stay recorded, so that one
 * brought back with another type is caught too.
 */
export function checkStateSchema(paths: CheckpointPaths, operatorId: number, op: TransformWithStateOp): (() => void) | undefined {
  const file = paths.stateSchema(operatorId);
  const record = existsSync(file) ? readVersioned<StateSchemaFile>(file, isSchemaFile) : undefined;
  const stored = record?.variables ?? [];
  for (const setting of ['timeMode', 'outputMode'] as const) {
    const was = record?.[setting];
    if (was !== undefined && was !== op[setting]) {
      // Spark's STATE_STORE_INVALID_CONFIG_AFTER_RESTART.
      throw new SluiceError(
        'STATE_SCHEMA_INCOMPATIBLE',
        `Cannot change ${setting} from ${was} to ${op[setting]} between restarts of operator ${operatorId}: set ${setting} to ${was}, or restart with a new checkpoint directory`,
        { file, option: setting },
      );
    }
  }
  for (const v of op.variables) {
    const was = stored.find((s) => s.name === v.name);
    if (was !== undefined && !sameVariable(was, v)) {
      throw new SluiceError(
        'STATE_SCHEMA_INCOMPATIBLE',
        `state variable '${v.name}' of operator ${operatorId} was a ${describe(was)} in this checkpoint, and is now a ${describe(v)}: ` +
          `its stored values cannot be read as that; keep its type, give the variable a new name, or use a new checkpoint`,
        { file },
      );
    }
  }
  const added = op.variables.filter((v) => !stored.some((s) => s.name === v.name));
  if (added.length === 0 && record?.timeMode !== undefined) return undefined;
  const shape = (v: StateVariable): StateVariable => {
    const { ttlMs: _ttl, ...rest } = v;
    return rest as StateVariable;
  };
  return () => writeVersioned(file, { variables: [...stored, ...added.map(shape)], timeMode: op.timeMode, outputMode: op.outputMode });
}

function describe(v: StateVariable): string {
  const t = (d: unknown): string => (typeof d === 'string' ? d.toUpperCase() : JSON.stringify(d));
  return v.kind === 'map' ? `map state of ${t(v.keySchema)} to ${t(v.schema)}` : `${v.kind} state of ${t(v.schema)}`;
}
