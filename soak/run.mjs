#!/usr/bin/env node
// The chaos soak (`pnpm soak`): outside CI, bounded in time. Scenario after scenario, it runs a
// query (soak/child.mjs) in child processes over fresh input: the scenarios take the kinds in turn,
// a stateless query, a windowed count (aggregation), then each other stateful operator kind
// (dropDuplicates, dropDuplicatesWithinWatermark, sessionWindow, streamJoin, transformWithState,
// flatMapGroupsWithState, limit: the queries of test/fixtures/operator-kinds.mjs). It disturbs each run: a
// SIGKILL at a random moment, a fault point (SLUICE_FAULT; a worker fault point ends only a worker
// thread, and that run must still complete), a udf that crashes its worker thread, a disk that
// fills up (a small tmpfs, enlarged once the query stopped with DISK_FULL), or a low `ulimit -n`
// (the run must fail with TOO_MANY_OPEN_FILES, or with STATE_FILE_BUDGET_TOO_SMALL before it
// starts, or succeed).
// After the last run of a scenario it checks the output: of the stateless query and the windowed
// count against an independent count (every row exactly once, every closed window once with its
// count); of another kind against a clean, undisturbed run of the same query over the same input,
// done first (the same rows, as a multiset). Once per soak it also runs 1000 session create/close
// cycles in one process (hung if 100 of them take a minute; their speed is a benchmark's,
// bench/new-session.bench.mjs). It ends with one summary line, with the scenarios, rows, lost and
// duplicated rows of each kind, and exits 1 on any loss, duplicate, hang or unexpected error.
//
//   pnpm soak                      10 minutes of scenarios, after the session cycles
//   SLUICE_SOAK_MINUTES=2 pnpm soak
//   SLUICE_SOAK_SEED=42 pnpm soak  a repeatable sequence of disturbances
//
// The disk-full case mounts a tmpfs and needs root; without it that case is left out and the
// summary says so.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { operatorQueries } from '../test/fixtures/operator-kinds.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..');
const CHILD = join(here, 'child.mjs');
const CYCLES = join(repo, 'test', 'fixtures', 'session-cycles.mjs');
const minutes = Number(process.env.SLUICE_SOAK_MINUTES ?? 10);
let seed = Number(process.env.SLUICE_SOAK_SEED ?? Date.now() % 1_000_000);
const firstSeed = seed;
/** A small deterministic generator, so that a failing soak can be rerun with its seed. */
function random() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}
const pick = (xs) => xs[Math.floor(random() * xs.length)];

// The queries, one a scenario in turn: stateless, then every stateful operator kind.
const KINDS = ['stateless', ...Object.keys(operatorQueries)];
// The kinds whose output is checked against an independent count; the others against a clean run.
const COUNTED = new Set(['stateless', 'aggregation']);
// The first three are the driver's, the only ones a stateless query reaches. A worker fault point
// ends only a worker thread: its run must go on to DONE.
const FAULT_POINTS = ['after-offsets-write', 'after-sink-commit', 'before-commit-log', 'after-state-commit', 'mid-rollback', 'worker-after-state-commit'];
const WORKER_FAULT = /^SLUICE_FAULT (worker-\S+): ended worker thread/m;
const CHILD_LIMIT_MS = 90_000;
// The session cycles run as long as 1000 sessions take (bench/new-session.bench.mjs measures one);
// they are hung when 100 cycles take longer than this.
const CYCLES_STALL_MS = 60_000;
const MIN = 60_000;
const T0 = Date.UTC(2024, 0, 1);

const stats = {
  scenarios: 0,
  runs: 0,
  kills: 0,
  faults: 0,
  faultPoints: new Set(),
  crashes: 0,
  diskFull: 0,
  lowUlimit: 0,
  rows: 0,
  lost: 0,
  duplicated: 0,
  cycles: 0,
  cleanRuns: 0,
  /** kind → its checked scenarios, their sink rows, lost and duplicated rows. */
  kinds: new Map(KINDS.map((k) => [k, { scenarios: 0, rows: 0, lost: 0, duplicated: 0 }])),
};
const problems = [];
/** kind → how long a whole run of it took last (a clean run, or a first attempt that completed). */
const runMs = new Map();
const root = mkdtempSync(join(tmpdir(), 'sluice-soak-'));

/**
 * Runs a child to its end. It is hung past CHILD_LIMIT_MS, or, with `stallMs`, when it writes
 * nothing to stderr for that long (a child that reports its progress there).
 */
function run(cmd, args, env, killAfterMs, stallMs) {
  return new Promise((resolve) => {
    const start = Date.now();
    const child = spawn(cmd, args, { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    // Past the limit a run is hung, whatever else was meant to end it (a kill, a fault point).
    let hung = false;
    const hang = () => {
      hung = true;
      child.kill('SIGKILL');
    };
    let hard = setTimeout(hang, stallMs ?? CHILD_LIMIT_MS);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      if (stallMs === undefined) return;
      clearTimeout(hard);
      hard = setTimeout(hang, stallMs);
    });
    let killer;
    if (killAfterMs !== undefined) killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('exit', (code, signal) => {
      clearTimeout(hard);
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr, hung, ms: Date.now() - start });
    });
  });
}

function canMount() {
  const dir = mkdtempSync(join(root, 'probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

/** The input of the counted kinds: `files` files, one minute of events each: ids a, b, c, two rows each. */
function writeInput(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < files; f++) {
    const lines = [];
    for (const id of ['a', 'b', 'c'])
      for (let r = 0; r < 2; r++) lines.push(JSON.stringify({ id, v: f * 6 + lines.length, t: new Date(T0 + f * MIN).toISOString() }));
    const p = join(dir, `f${String(f).padStart(3, '0')}.json`);
    writeFileSync(p, `${lines.join('\n')}\n`);
    utimesSync(p, 1000 + f, 1000 + f);
  }
}

/**
 * The input of the other kinds: `files` files {key, eventTime, n}, about 4 seconds of events each
 * (the queries' watermark is 10 seconds, so state lives across batches): six keys that come back,
 * rows repeated with their key and event time, and rows late past the watermark.
 */
function writeEvents(dir, files) {
  mkdirSync(dir, { recursive: true });
  const earlier = [];
  let n = 0;
  for (let f = 0; f < files; f++) {
    const lines = [];
    for (let r = 0; r < 6; r++) {
      const x = random();
      let key = pick(['a', 'b', 'c', 'd', 'e', 'f']);
      let s = f * 4 + Math.floor(random() * 6);
      if (x < 0.15 && earlier.length > 0) [key, s] = pick(earlier.slice(-12));
      else if (x < 0.25) s = Math.max(0, f * 4 - 15 - Math.floor(random() * 10));
      earlier.push([key, s]);
      lines.push(JSON.stringify({ key, eventTime: new Date(T0 + s * 1000).toISOString(), n: n++ }));
    }
    const p = join(dir, `f${String(f).padStart(3, '0')}.json`);
    writeFileSync(p, `${lines.join('\n')}\n`);
    utimesSync(p, 1000 + f, 1000 + f);
  }
}

function sinkRows(out) {
  const meta = join(out, '_sluice_metadata');
  if (!existsSync(meta)) return [];
  const rows = [];
  for (const id of readdirSync(meta)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b)) {
    const text = readFileSync(join(meta, String(id)), 'utf8');
    for (const f of JSON.parse(text.slice(text.indexOf('\n') + 1)).files) {
      for (const line of readFileSync(join(out, f.name), 'utf8').split('\n')) if (line) rows.push(JSON.parse(line));
    }
  }
  return rows;
}

/** Rows as a multiset: a row's JSON → how often. */
function multiset(rows, keyOf) {
  const seen = new Map();
  for (const r of rows) {
    const key = keyOf(r);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return seen;
}

/**
 * Compares the sink with what the scenario must give: for a counted kind its independent count, for
 * another the rows of its clean run (`reference`), as multisets.
 */
function check(kind, files, out, reference, label) {
  const rows = sinkRows(out);
  let expected;
  let seen;
  if (kind === 'stateless') {
    expected = new Map();
    for (let v = 0; v < files * 6; v++) expected.set(String(v), 1);
    seen = multiset(rows, (r) => String(r.v));
  } else if (kind === 'aggregation') {
    expected = new Map();
    // AvailableNow ends with the watermark at the last minute minus 10: windows ending by then are closed.
    const watermark = T0 + (files - 1) * MIN - 10 * MIN;
    for (let w = 0; T0 + (w + 5) * MIN <= watermark; w += 5) for (const id of ['a', 'b', 'c']) expected.set(`${w}|${id}|10`, 1);
    seen = multiset(rows, (r) => `${(Date.parse(r.window.start) - T0) / MIN}|${r.id}|${r.count}`);
  } else {
    expected = multiset(reference, (r) => JSON.stringify(r));
    seen = multiset(rows, (r) => JSON.stringify(r));
  }
  let lost = 0;
  let duplicated = 0;
  for (const [k, n] of expected) if ((seen.get(k) ?? 0) < n) lost += n - (seen.get(k) ?? 0);
  for (const [k, n] of seen) if (n > (expected.get(k) ?? 0)) duplicated += n - (expected.get(k) ?? 0);
  stats.rows += rows.length;
  stats.lost += lost;
  stats.duplicated += duplicated;
  const perKind = stats.kinds.get(kind);
  perKind.scenarios += 1;
  perKind.rows += rows.length;
  perKind.lost += lost;
  perKind.duplicated += duplicated;
  if (lost > 0 || duplicated > 0) problems.push(`${label}: ${lost} lost, ${duplicated} duplicated`);
}

async function scenario(n, mountable) {
  // In turn, so that a short soak reaches every kind; the disturbances are random.
  const kind = KINDS[n % KINDS.length];
  const files = 60 + Math.floor(random() * 60);
  const dir = join(root, `s${n}`);
  const input = join(dir, 'in');
  if (COUNTED.has(kind)) writeInput(input, files);
  else writeEvents(input, files);
  const what = `scenario ${n} (${kind}, ${files} files`;
  // A kind without an independent count: first a clean run over the same input, whose rows the
  // disturbed runs must give exactly.
  let reference;
  if (!COUNTED.has(kind)) {
    const env = { ...process.env };
    delete env.SLUICE_FAULT;
    const clean = { out: join(dir, 'clean-out'), ckpt: join(dir, 'clean-ckpt') };
    const result = await run(process.execPath, [CHILD, kind, input, clean.out, clean.ckpt], env);
    stats.cleanRuns += 1;
    runMs.set(kind, result.ms);
    if (result.code !== 0 || !/^DONE/m.test(result.stdout)) {
      const why = result.hung ? `hung past ${CHILD_LIMIT_MS} ms` : (result.stdout.trim().split('\n').at(-1) ?? `${result.signal ?? result.code}`);
      problems.push(`${what}): its clean run did not complete: ${why} ${result.stderr.slice(-300)}`);
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    reference = sinkRows(clean.out);
  }
  let store = dir;
  const disk = mountable && random() < 0.15 ? 'full' : random() < 0.1 ? 'ulimit' : 'none';
  if (disk === 'full') {
    store = join(dir, 'tmpfs');
    mkdirSync(store, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kind === 'stateless' ? 48 : 160}k`, 'tmpfs', store], { stdio: 'pipe' });
  }
  const out = join(store, 'out');
  const ckpt = join(store, 'ckpt');
  const label = `${what}${disk === 'none' ? '' : `, ${disk}`})`;
  try {
    let afterStateCommitKill = false;
    for (let attempt = 0; attempt < 60; attempt++) {
      const env = { ...process.env };
      delete env.SLUICE_FAULT;
      const args = [CHILD, kind, input, out, ckpt];
      let killAfterMs;
      let expectFailure;
      const r = random();
      if (afterStateCommitKill && random() < 0.7) {
        // A shard committed a batch that the checkpoint did not: the restart rolls it back.
        env.SLUICE_FAULT = 'mid-rollback:1';
      } else if (attempt === 0 && disk === 'ulimit') {
        expectFailure = 'ulimit';
        stats.lowUlimit += 1;
      } else if (r < 0.45) {
        // Any moment of a whole run, which takes from half a second to seconds by kind and load.
        killAfterMs = 60 + Math.floor(random() * (runMs.get(kind) ?? 500));
      } else if (r < 0.7) {
        env.SLUICE_FAULT = `${pick(kind === 'stateless' ? FAULT_POINTS.slice(0, 3) : FAULT_POINTS)}:${1 + Math.floor(random() * 3)}`;
      } else if (r < 0.8) {
        args.push(join(dir, `crash-${attempt}`));
      }
      const result =
        expectFailure === 'ulimit'
          ? await run('bash', ['-c', `ulimit -n 64 && exec "${process.execPath}" ${args.map((a) => `"${a}"`).join(' ')}`], env)
          : await run(process.execPath, args, env, killAfterMs);
      stats.runs += 1;
      if (result.hung) {
        problems.push(`${label}: a run hung past ${CHILD_LIMIT_MS} ms`);
        return;
      }
      const done = /^DONE/m.test(result.stdout);
      if (done && attempt === 0 && COUNTED.has(kind) && !env.SLUICE_FAULT && args.length === 5) runMs.set(kind, result.ms);
      // Count the disturbances that happened: a kill or a fault point that ended the run.
      const killed = result.signal === 'SIGKILL' && !done;
      const workerFault = WORKER_FAULT.exec(result.stderr);
      if ((killed && env.SLUICE_FAULT) || workerFault) {
        stats.faults += 1;
        stats.faultPoints.add(env.SLUICE_FAULT.split(':')[0]);
      } else if (killed && killAfterMs !== undefined) stats.kills += 1;
      afterStateCommitKill = killed && env.SLUICE_FAULT?.startsWith('after-state-commit') === true;
      const failed = /^FAILED (\S+)/m.exec(result.stdout);
      if (failed) {
        const code = failed[1];
        if (code === 'DISK_FULL' && disk === 'full') {
          stats.diskFull += 1;
          execFileSync('mount', ['-o', 'remount,size=64m', store], { stdio: 'pipe' });
          continue;
        }
        // Too few handles: found while running, or, for state shards, by the budget check at start.
        if ((code === 'TOO_MANY_OPEN_FILES' || code === 'STATE_FILE_BUDGET_TOO_SMALL') && expectFailure === 'ulimit') continue;
        problems.push(`${label}: unexpected ${result.stdout.trim().split('\n').at(-1)}`);
        return;
      }
      // A worker fault ends a thread, not the process: the query retries the task and goes on.
      if (workerFault && !done) {
        problems.push(`${label}: ${env.SLUICE_FAULT} ended a worker, and the run did not complete (${result.signal ?? result.code})`);
        return;
      }
      const crashed = args.length > 5 && existsSync(args[5]);
      if (crashed) stats.crashes += 1;
      if (done) break; // everything committed (a kill after it changes nothing)
    }
    check(kind, files, out, reference, label);
  } finally {
    if (disk === 'full') execFileSync('umount', ['-l', store], { stdio: 'pipe' });
    rmSync(dir, { recursive: true, force: true });
  }
}

const started = Date.now();
const mountable = canMount();
try {
  const cyclesStarted = Date.now();
  const cycles = await run(process.execPath, [CYCLES, '1000'], { ...process.env }, undefined, CYCLES_STALL_MS);
  stats.cyclesSeconds = Math.round((Date.now() - cyclesStarted) / 1000);
  if (cycles.stdout.trim() === 'done 1000' && cycles.code === 0) stats.cycles = 1000;
  else if (cycles.hung)
    problems.push(`session create/close cycles: 100 cycles took over ${CYCLES_STALL_MS} ms (${cycles.stderr.trim().split('\n').at(-1) || 'none done'})`);
  else problems.push(`session create/close cycles: ${cycles.signal ?? cycles.code} ${cycles.stderr.slice(-300)}`);
  // The minutes are the scenarios': the cycles above take what 1000 sessions take.
  const deadline = Date.now() + minutes * 60_000;
  let n = 0;
  while (Date.now() < deadline && problems.length === 0) {
    await scenario(n++, mountable);
    stats.scenarios += 1;
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
for (const p of problems) console.error(`soak problem: ${p}`);
const took = Math.round((Date.now() - started) / 1000);
console.log(
  `soak: ${Math.floor(took / 60)}m${String(took % 60).padStart(2, '0')}s seed ${firstSeed}, ${stats.scenarios} scenarios, ${stats.runs} runs, ` +
    `kills ${stats.kills}, faults ${stats.faults} (${[...stats.faultPoints].sort().join(', ')}), worker crashes ${stats.crashes}, ` +
    `disk full ${mountable ? stats.diskFull : 'left out (no mount)'}, low ulimit ${stats.lowUlimit}, session cycles ${stats.cycles} (${stats.cyclesSeconds} s), ` +
    `rows ${stats.rows}, lost ${stats.lost}, duplicated ${stats.duplicated}, clean runs ${stats.cleanRuns}, ` +
    `kinds (scenarios/rows): ${[...stats.kinds]
      .map(([kind, k]) => {
        const bad = [k.lost > 0 && `lost ${k.lost}`, k.duplicated > 0 && `duplicated ${k.duplicated}`].filter(Boolean);
        return `${kind} ${k.scenarios}/${k.rows}${bad.length > 0 ? ` (${bad.join(', ')})` : ''}`;
      })
      .join(', ')}`,
);
process.exit(problems.length === 0 ? 0 : 1);
