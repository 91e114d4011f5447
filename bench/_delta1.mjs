import { Session } from '@sluice/driver';
import { readFileSync } from 'node:fs';
const G = '/work/main/test/fixtures/delta-golden';
const E = JSON.parse(readFileSync(`${G}/EXPECTED.json`, 'utf8'));
const s = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
function plain(v) {
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Map) return [...v].map(([k, x]) => [plain(k), plain(x)]);
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}
for (const [t, e] of Object.entries(E)) {
  if (process.argv[2] && t !== process.argv[2]) continue;
  try {
    const df = s.read.format('delta').load(`${G}/${t}`);
    const rows = (await df.collect()).map(plain);
    console.log(t, rows.length, e.rows.length, JSON.stringify(rows.slice(0, 2)), '| exp', JSON.stringify(e.rows.slice(0, 2)));
  } catch (err) { console.log(t, 'ERR', err.code, err.message, err.stack.split('\n').slice(1,4).join(' ')); }
}
await s.close();
