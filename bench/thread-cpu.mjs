// CPU seconds of every thread of a benchmark's process, printed when it exits: the main thread,
// V8's helper threads (its compiler and garbage collector, which no CPU profile shows), libuv's
// pool (LevelDB's reads and writes) and the worker threads.
//
//   node --import ./bench/thread-cpu.mjs bench/<x>.bench.mjs
//
// Threads are named by their id less the process id, in the order they started: V8's helpers
// first (2-5 on a 4-helper platform), then libuv's pool, then workers as their slots start. The
// figures come from /proc (Linux only; elsewhere this prints nothing); a thread that has ended
// keeps its last reading, taken every 200 ms.
import { readdirSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux
const last = new Map(); // thread id -> utime + stime, in ticks

function sample() {
  let tasks;
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return;
  }
  for (const t of tasks) {
    try {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      last.set(Number(t), Number(fields[11]) + Number(fields[12]));
    } catch {
      // The thread ended between the listing and the read: its last reading stands.
    }
  }
}

if (isMainThread) {
  setInterval(sample, 200).unref();
  process.on('exit', () => {
    sample();
    if (last.size === 0) return;
    const rows = [...last].filter(([, ticks]) => ticks >= 5).sort(([a], [b]) => a - b);
    const total = [...last.values()].reduce((n, ticks) => n + ticks, 0);
    const name = (tid) => (tid === process.pid ? 'main' : `+${tid - process.pid}`);
    console.error(
      `thread CPU s (total ${(total / TICKS_PER_SECOND).toFixed(2)}): ` +
        rows.map(([tid, ticks]) => `${name(tid)} ${(ticks / TICKS_PER_SECOND).toFixed(2)}`).join(', '),
    );
  });
}
