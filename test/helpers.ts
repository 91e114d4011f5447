/** Shared helpers of the end-to-end tests: a file's session, temp dirs, input files with chosen mtimes, sink output, deadlines. */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from '@sluice/driver';
import { afterAll, afterEach, beforeAll } from 'vitest';

const made: string[] = [];

export function tempDir(prefix = 'sluice-test-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

export function removeTempDirs(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Writes `name` in `dir` with the given lines and modification time (seconds since epoch). */
export function writeInput(dir: string, name: string, lines: string[], mtimeSec?: number): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
  if (mtimeSec !== undefined) utimesSync(path, mtimeSec, mtimeSec);
  return path;
}

export function jsonLines(rows: Array<Record<string, unknown>>): string[] {
  return rows.map((r) => JSON.stringify(r));
}

/** The JSON document of a versioned checkpoint file's text (after its `v1` line). */
export function parseDoc(text: string): Record<string, unknown> {
  return JSON.parse(text.slice(text.indexOf('\n') + 1)) as Record<string, unknown>;
}

/** The JSON document of the versioned checkpoint file at `path`. */
export function readDoc(path: string): Record<string, unknown> {
  return parseDoc(readFileSync(path, 'utf8'));
}

/**
 * The session of the tests of a file (or of the describe block that calls it), of the conf given (2
 * cores unless it says otherwise): created before the first test, every query still active stopped
 * after each test, closed after the last one, and then the temp dirs removed. Returns its accessor,
 * to call inside the tests: `const session = useSession(); ... session().readStream`.
 */
export function useSession(conf: Record<string, unknown> = {}): () => Session {
  let session: Session | undefined;
  beforeAll(async () => {
    session = await Session.create({ conf: { 'sluice.executor.cores': 2, ...conf } });
  });
  afterEach(async () => {
    for (const q of session?.streams.active ?? []) await q.stop();
  });
  afterAll(async () => {
    await session?.close();
    removeTempDirs();
  });
  return () => {
    if (session === undefined) throw new Error('useSession: the session exists inside the tests and hooks that run after its beforeAll');
    return session;
  };
}

/** Runs `fn` with a session of the conf given (2 cores unless it says otherwise), closed in a finally. */
export async function withSession<T>(conf: Record<string, unknown>, fn: (s: Session) => Promise<T>): Promise<T> {
  const session = await Session.create({ conf: { 'sluice.executor.cores': 2, ...conf } });
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

/** The part files a file sink's manifests list, in batch order, with their row counts. */
export function sinkManifestFiles(dir: string): Array<{ path: string; rows: number }> {
  const metaDir = join(dir, '_sluice_metadata');
  const ids = readdirSync(metaDir)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
  return ids.flatMap((id) =>
    (readDoc(join(metaDir, String(id))) as unknown as { files: Array<{ name: string; rows: number }> }).files.map((f) => ({
      path: join(dir, f.name),
      rows: f.rows,
    })),
  );
}

/** Rows of every committed part file of a JSON sink directory, read through its manifests. */
export function readSinkJson(dir: string): Array<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  for (const f of sinkManifestFiles(dir)) {
    for (const line of readFileSync(f.path, 'utf8').split('\n')) if (line) rows.push(JSON.parse(line));
  }
  return rows;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Waits until `done()` holds, polling every `pollMs` (10 ms); past `timeoutMs` it throws, naming `what`. */
export async function waitUntil(done: () => boolean, what: string, timeoutMs = 30_000, pollMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await sleep(pollMs);
  }
}

/**
 * Whether this machine has what a test needs. Under `CI=true` it must have it: the test runs, and
 * fails naming the tool when it is missing (.ci/run installs every tool). Elsewhere a test without
 * it skips, and one line says what to install, so that `pnpm test` passes on a plain machine.
 */
export function machineHas(what: string, present: boolean, install: string): boolean {
  if (present || process.env.CI === 'true') return true;
  console.log(`skipped: these tests need ${what}; ${install}`);
  return false;
}

/** Root, to mount a tmpfs (real full-disk and read-only faults). */
export const hasRoot = (): boolean => machineHas('root (they mount a tmpfs)', process.getuid?.() === 0, 'run them as root, as .ci/run does');

/**
 * Mounts a tmpfs of `sizeKb` at a new temp dir (read-only with `readOnly`), for real disk-full and
 * read-only faults. Needs the root privileges the test machines give; unmount it in a `finally`.
 */
export function mountTmpfs(sizeKb: number, readOnly = false): string {
  const dir = tempDir('sluice-tmpfs-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k${readOnly ? ',ro' : ''}`, 'tmpfs', dir], { stdio: 'pipe', timeout: 10_000 });
  return dir;
}

export function remountTmpfs(dir: string, sizeKb: number): void {
  execFileSync('mount', ['-o', `remount,size=${sizeKb}k`, dir], { stdio: 'pipe', timeout: 10_000 });
}

export function unmount(dir: string): void {
  execFileSync('umount', ['-l', dir], { stdio: 'pipe', timeout: 10_000 });
}

/** The error `fn` throws, to match its code and details; fails when it throws nothing. */
export function thrown(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    return e as Record<string, unknown>;
  }
  throw new Error('expected the call to throw');
}

/** A collected value made plain (Date as ISO text, Map as entries), to compare whole rows. */
export function plain(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Map) return [...v].map(([k, x]) => [plain(k), plain(x)]);
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** How a child process ended: its exit code or signal, its output, and whether it ran past its time. */
export interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs `cmd` to its end; past `timeoutMs` it is SIGKILLed (and `timedOut`). It never outlives the call. */
export async function runChild(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<ChildRun> {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, opts.timeoutMs);
  try {
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal }));
    });
    return { code, signal, stdout, stderr, timedOut };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
