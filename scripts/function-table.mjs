// Writes the README's SQL function reference (between its function-table markers) from the
// registry in the built driver package: run `pnpm build` first. A test fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const { sqlFunctionTable } = await import('../packages/driver/dist/api/sql/sqlFunctions.js');
const readme = fileURLToPath(new URL('../README.md', import.meta.url));
const START = '<!-- function-table:start -->';
const END = '<!-- function-table:end -->';
const text = readFileSync(readme, 'utf8');
const [i, j] = [text.indexOf(START), text.indexOf(END)];
if (i < 0 || j < i) throw new Error(`README.md has no ${START} ... ${END} block`);
writeFileSync(readme, `${text.slice(0, i + START.length)}\n${sqlFunctionTable()}\n${text.slice(j)}`);
console.log('README.md: function table written');
