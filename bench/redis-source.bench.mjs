// Redis Streams source: rows/s reading 1M entries with maxOffsetsPerTrigger 100k into a memory
// sink, against a hand-written XRANGE loop with the same client (ioredis) in the same run.
//
//   a redis-server of its own on a free loopback port (Debian's /usr/bin/redis-server), one stream
//   of ENTRIES entries {n, payload}; Sluice: readStream.format('redis') (earliest,
//   maxOffsetsPerTrigger CAP, Trigger.AvailableNow) -> memory sink, start() to awaitTermination();
//   baseline: XRANGE (last COUNT CAP in a loop, each entry made into the row Sluice makes
//   {stream, id, timestamp, fields: JSON}). Baseline, Sluice, baseline; the baseline's figure is
//   the mean of its two runs.
//
// Knobs (environment): SLUICE_BENCH_ENTRIES (1000000), SLUICE_BENCH_CAP (100000),
// SLUICE_BENCH_CORES (2), SLUICE_BENCH_TMP.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, record, round, ROOT_DIR } from './lib.mjs';

const ENTRIES = envInt('SLUICE_BENCH_ENTRIES', 1_000_000);
const CAP = envInt('SLUICE_BENCH_CAP', 100_000);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const LOAD_AT_START = loadavg()[0];
const SERVER = '/usr/bin/redis-server';
if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: apt-get install -y redis-server`);

const { Redis } = createRequire(join(ROOT_DIR, 'packages', 'driver', 'package.json'))('ioredis');
const { Session, Trigger } = await loadDriver();
const tmp = makeTempDir('redis');
cleanupOnExit(tmp);

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const server = spawn(SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--dir', tmp, '--save', '', '--appendonly', 'no'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
process.once('exit', () => server.kill('SIGKILL'));
await new Promise((resolve) => server.stdout.on('data', (d) => String(d).includes('Ready to accept connections') && resolve()));
const url = `redis://127.0.0.1:${port}`;
const redis = new Redis(url);

for (let i = 0; i < ENTRIES; i += 10_000) {
  const p = redis.pipeline();
  for (let j = i; j < Math.min(ENTRIES, i + 10_000); j++) p.xadd('bench', '*', 'n', String(j), 'payload', `entry-${j}`);
  await p.exec();
}

async function baseline() {
  const t0 = performance.now();
  let last = '0-0';
  let rows = 0;
  for (;;) {
    const entries = await redis.xrange('bench', `(${last}`, '+', 'COUNT', CAP);
    if (entries.length === 0) break;
    const out = new Array(entries.length);
    entries.forEach(([id, flat], k) => {
      const fields = {};
      for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
      out[k] = { stream: 'bench', id, timestamp: Number(id.split('-')[0]), fields: JSON.stringify(fields) };
    });
    rows += out.length;
    last = entries[entries.length - 1][0];
  }
  if (rows !== ENTRIES) throw new Error(`baseline read ${rows} entries`);
  return (rows * 1000) / (performance.now() - t0);
}

async function sluice() {
  const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });
  try {
    const t0 = performance.now();
    const q = await session.readStream
      .format('redis')
      .options({ url, stream: 'bench', startingOffsets: 'earliest', maxOffsetsPerTrigger: CAP })
      .load()
      .writeStream.format('memory')
      .queryName('bench')
      .option('checkpointLocation', join(tmp, `ckpt-${Date.now()}`))
      .trigger(Trigger.AvailableNow())
      .start();
    await q.awaitTermination();
    const ms = performance.now() - t0;
    const rows = (await session.memoryTable('bench')).length;
    if (rows !== ENTRIES) throw new Error(`Sluice read ${rows} entries`);
    return { rowsPerSec: (rows * 1000) / ms, batches: q.recentProgress.filter((p) => p.numInputRows > 0).length };
  } finally {
    await session.close();
  }
}

const b1 = await baseline();
const s = await sluice();
const b2 = await baseline();
const base = (b1 + b2) / 2;
console.log({ baseline: [b1, b2], sluice: s });
record({
  name: 'redis-source',
  unit: 'rows/s',
  value: Math.round(s.rowsPerSec),
  baseline: Math.round(base),
  ratio: round(s.rowsPerSec / base, 3),
  params: {
    ratioIs: `Sluice (${CORES} slots, start() to awaitTermination(), memory sink) / an ioredis XRANGE loop making the same rows`,
    entries: ENTRIES,
    maxOffsetsPerTrigger: CAP,
    batches: s.batches,
    baselineRuns: [Math.round(b1), Math.round(b2)],
    client: 'ioredis 5.9.3',
    ...machineFacts(LOAD_AT_START),
  },
  command: commandLine(),
});
redis.disconnect();
server.kill('SIGKILL');
