/**
 * The import check that `pnpm test` runs over the built packages (scripts/check-imports.mjs): it
 * passes on this repository and reports each kind of violation in a made-up tree.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script without types
import { checkImports } from '../scripts/check-imports.mjs';
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
  'state/dist/index.js': "export const a = 1;\n",
  'executor/dist/index.js': "import { a } from '@sluice/state';\nexport const b = a;\n",
  'driver/dist/index.js': "export { Session } from './api/Session.js';\n",
  'driver/dist/api/Session.js': "import { run } from '../execution/Loop.js';\nexport class Session {}\n",
  'driver/dist/api/Session.d.ts': "import type { Loop } from '../execution/Loop.js';\n",
  'driver/dist/execution/Loop.js': "import { b } from '@sluice/executor';\nexport function run() { return b; }\n",
  // A type-only edge back into the API facade is erased from the JavaScript.
  'driver/dist/api/Query.js': "export class Query {}\n",
  'driver/dist/api/Query.d.ts': "import type { Session } from './Session.js';\n",
};

describe('the import check', () => {
  it('passes on the built packages of this repository', () => {
    expect(checkImports(join(REPO, 'packages'))).toEqual([]);
  });

  it('passes on a tree that keeps the rules', () => {
    expect(checkImports(tree(clean))).toEqual([]);
  });

  it('reports a runtime cycle, naming its modules', () => {
    const problems = checkImports(
      tree({
        ...clean,
        'driver/dist/plan/A.js': "import { b } from './B.js';\nexport const a = 1;\n",
        'driver/dist/plan/B.js': "import { c } from '../sinks/C.js';\nexport const b = 1;\n",
        'driver/dist/sinks/C.js': "import { a } from '../plan/A.js';\nexport const c = 1;\n",
      }),
    );
    expect(problems).toEqual(['driver: runtime import cycle: plan/A -> plan/B -> sinks/C']);
  });

  it('reports execution/ or plan/ importing api/, at runtime or for types', () => {
    const problems = checkImports(
      tree({
        ...clean,
        'driver/dist/execution/Uses.js': "import { Session } from '../api/Session.js';\n",
        'driver/dist/plan/Types.js': 'export {};\n',
        'driver/dist/plan/Types.d.ts': "import type { Query } from '../api/Query.js';\n",
      }),
    );
    expect(problems).toEqual([
      'driver: execution/Uses imports api/Session: only api/ and the package entry may use the API',
      'driver: plan/Types imports api/Query (types): only api/ and the package entry may use the API',
    ]);
  });

  it('reports a package importing one above it, and a missing build', () => {
    const problems = checkImports(tree({ ...clean, 'state/dist/index.js': "import '@sluice/driver';\n", 'executor/dist/index.js': '' }));
    expect(problems).toEqual(["state: index.js imports @sluice/driver: state may import no other Sluice package"]);
    const { ['executor/dist/index.js']: _, ...noExecutor } = clean;
    expect(checkImports(tree(noExecutor))[0]).toMatch(/^executor: no built JavaScript under /);
  });
});
