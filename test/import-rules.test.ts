/**
 * The import check that `pnpm test` runs over the packages' sources and declarations
 * (scripts/check-imports.mjs): it passes on this repository and reports each kind of violation in
 * a made-up tree.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script without types
import { checkImports, WORKER_ONLY } from '../scripts/check-imports.mjs';
import { removeTempDirs, tempDir } from './helpers.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

afterAll(removeTempDirs);

/** Writes `files` (path under packages/ → text) and returns the packages dir. */
function tree(files: Record<string, string>): string {
  const root = tempDir('sluice-imports-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const clean = {
  'state/src/index.ts': 'export const a = 1;\n',
  'state/dist/types/index.d.ts': 'export declare const a = 1;\n',
  'executor/src/index.ts': "import { a } from '@sluice/state';\nexport const b = a;\n",
  'executor/dist/types/index.d.ts': 'export declare const b: number;\n',
  'driver/src/index.ts': "export { Session } from './api/Session.js';\n",
  'driver/dist/types/index.d.ts': "export { Session } from './api/Session.js';\n",
  'driver/src/api/Session.ts': "import { run } from '../execution/Loop.js';\nexport class Session { go() { return run(); } }\n",
  'driver/dist/types/api/Session.d.ts': "import type { Loop } from '../execution/Loop.js';\n",
  'driver/src/execution/Loop.ts': "import { b } from '@sluice/executor';\nexport function run() { return b; }\n",
  // A type-only edge back into the API facade is erased from the JavaScript: with `import type`,
  // or with a plain import whose names are only used as types.
  'driver/src/api/Query.ts': "import type { Session } from './Session.js';\nexport class Query { s?: Session; }\n",
  'driver/src/execution/Typed.ts': "import { Session } from '../api/Session.js';\nexport let s: Session | undefined;\n",
};

describe('the import check', () => {
  it('passes on the packages of this repository', () => {
    expect(checkImports(join(REPO, 'packages'))).toEqual([]);
  });

  it('passes on a tree that keeps the rules', () => {
    expect(checkImports(tree(clean))).toEqual([]);
  });

  it('reports a runtime cycle, naming its modules', () => {
    const problems = checkImports(
      tree({
        ...clean,
        'driver/src/plan/A.ts': "import { b } from './B.js';\nexport const a = b;\n",
        'driver/src/plan/B.ts': "import { c } from '../sinks/C.js';\nexport const b = c;\n",
        'driver/src/sinks/C.ts': "import { a } from '../plan/A.js';\nexport const c = () => a;\n",
      }),
    );
    expect(problems).toEqual(['driver: runtime import cycle: plan/A -> plan/B -> sinks/C']);
  });

  it('reports execution/ or plan/ importing api/, at runtime or for types', () => {
    const problems = checkImports(
      tree({
        ...clean,
        'driver/src/execution/Uses.ts': "import { Session } from '../api/Session.js';\nexport const s = new Session();\n",
        'driver/src/plan/Types.ts': 'export {};\n',
        'driver/dist/types/plan/Types.d.ts': "import type { Query } from '../api/Query.js';\n",
      }),
    );
    expect(problems).toEqual([
      'driver: execution/Uses imports api/Session: only api/ and the package entry may use the API',
      'driver: plan/Types imports api/Query (types): only api/ and the package entry may use the API',
    ]);
  });

  it('reports a package importing one above it, and a missing build', () => {
    const problems = checkImports(tree({ ...clean, 'state/src/index.ts': "import '@sluice/driver';\n", 'executor/src/index.ts': 'export const b = 1;\n' }));
    expect(problems).toEqual(['state: index.ts imports @sluice/driver: state may import no other Sluice package']);
    const { 'executor/dist/types/index.d.ts': _, ...noExecutor } = clean;
    expect(checkImports(tree(noExecutor))[0]).toMatch(/^executor: no declarations under /);
  });

  it("reports the executor's package entry reaching a worker-only module at runtime, by its import path", () => {
    const worker = {
      ...clean,
      'executor/src/operators/registry.ts': "import type { StateContext } from './stateContext.js';\nexport let ctx: StateContext | undefined;\n",
      'executor/src/operators/stateContext.ts': "import { StateWriter } from './stateWriter.js';\nexport class StateContext { w = new StateWriter(); }\n",
      'executor/src/operators/stateWriter.ts': 'export class StateWriter {}\n',
      'executor/src/operators/limit/plan.ts': 'export const limit = { kind: "limit" };\n',
      'executor/src/operators/limit/task.ts': "import { StateContext } from '../stateContext.js';\nexport const limitTask = () => new StateContext();\n",
      // The worker entry and what it loads may reach anything.
      'executor/src/task/entry.cts': "const worker = import('./worker.js');\nexport = worker;\n",
      'executor/src/task/worker.ts': "import { limitTask } from '../operators/limit/task.js';\nexport default limitTask;\n",
    };
    // A type-only import of a worker-only module is erased: the engine entry may name its types.
    expect(
      checkImports(
        tree({ ...worker, 'executor/src/index.ts': "export * from './operators/registry.js';\nexport { limit } from './operators/limit/plan.js';\n" }),
      ),
    ).toEqual([]);
    const problems = checkImports(
      tree({
        ...worker,
        'executor/src/index.ts':
          "export { limit } from './operators/limit/plan.js';\nexport { limitTask } from './operators/limit/task.js';\nexport { w } from './operators/tasks.js';\n",
        'executor/src/operators/tasks.ts': "import { StateWriter } from './stateWriter.js';\nexport const w = new StateWriter();\n",
      }),
    );
    // The first worker-only module on each path is reported, not what it imports in turn.
    expect(problems).toEqual([
      'executor: the package entry reaches worker-only operators/limit/task at runtime (index -> operators/limit/task): the engine library must not load what runs only in a worker thread (WORKER_ONLY in scripts/check-imports.mjs)',
      'executor: the package entry reaches worker-only operators/tasks at runtime (index -> operators/tasks): the engine library must not load what runs only in a worker thread (WORKER_ONLY in scripts/check-imports.mjs)',
    ]);
  });

  it("lists as worker-only only modules the executor has, each kind's task part among them", () => {
    const src = join(REPO, 'packages/executor/src');
    for (const entry of WORKER_ONLY as string[]) {
      const [dir, file] = [dirname(entry), entry.slice(dirname(entry).length + 1)];
      const dirs = dir.includes('*')
        ? readdirSync(join(src, dirname(dir)), { withFileTypes: true })
            .filter((d) => d.isDirectory())
            .map((d) => join(dirname(dir), d.name))
        : [dir];
      expect(
        dirs.some((d) => existsSync(join(src, d, file))),
        entry,
      ).toBe(true);
    }
    // A kind's folder holds its plan part and its task part (operators/*/task.ts above).
    const kinds = readdirSync(join(src, 'operators'), { withFileTypes: true }).filter(
      (d) => d.isDirectory() && existsSync(join(src, 'operators', d.name, 'plan.ts')),
    );
    expect(kinds.length).toBeGreaterThan(0);
    for (const k of kinds) expect(existsSync(join(src, 'operators', k.name, 'task.ts')), k.name).toBe(true);
  });
});
