// Writes the SQL function table of docs/reference/sql-functions.md (between its function-table
// markers) from the registry in the driver's source (packages/driver/src/api/sql/sqlFunctions.ts),
// compiled for the occasion. A test fails while the two differ.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const source = fileURLToPath(new URL('../packages/driver/src/api/sql/sqlFunctions.ts', import.meta.url));
// Inside the driver's package, so that its imports of @sluice/executor and @sluice/state resolve.
const compiled = fileURLToPath(new URL('../packages/driver/.function-table.mjs', import.meta.url));
await build({ entryPoints: [source], outfile: compiled, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
let sqlFunctionTable;
try {
  ({ sqlFunctionTable } = await import(pathToFileURL(compiled).href));
} finally {
  rmSync(compiled, { force: true });
}
const page = fileURLToPath(new URL('../docs/reference/sql-functions.md', import.meta.url));
const START = '<!-- function-table:start -->';
const END = '<!-- function-table:end -->';
const text = readFileSync(page, 'utf8');
const [i, j] = [text.indexOf(START), text.indexOf(END)];
if (i < 0 || j < i) throw new Error(`docs/reference/sql-functions.md has no ${START} ... ${END} block`);
writeFileSync(page, `${text.slice(0, i + START.length)}\n${sqlFunctionTable()}\n${text.slice(j)}`);
console.log('docs/reference/sql-functions.md: function table written');
