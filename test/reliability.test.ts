/**
 * Never hang, never lose data silently: the cases a user met as bad input or faults, each with
 * what they now observe. Every session here is the test's own and is closed in a `finally`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Session, type StreamingQuery } from '@sluice/driver';
import { removeTempDirs, sleep } from './helpers.js';

afterAll(removeTempDirs);

async function withSession<T>(conf: Record<string, unknown>, fn: (s: Session) => Promise<T>): Promise<T> {
  const session = await Session.create({ conf: { 'sluice.executor.cores': 2, ...conf } });
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

describe('the listener bus under pressure', () => {
  it('delivers every start, termination and query progress while idle events flood a small queue', async () => {
    await withSession(
      { 'sluice.scheduler.listenerbus.eventqueue.capacity': 20, 'sluice.sql.streaming.noDataProgressEventInterval': 0 },
      async (session) => {
        const seen = { started: new Set<string>(), progress: new Set<string>(), terminated: new Set<string>() };
        session.streams.addListener({
          onQueryStarted: async (e) => {
            seen.started.add(e.id);
            await sleep(20); // a slow listener
          },
          onQueryProgress: async (e) => {
            seen.progress.add(e.progress.id);
            await sleep(20);
          },
          onQueryIdle: () => sleep(20),
          onQueryTerminated: async (e) => {
            seen.terminated.add(e.id);
            await sleep(20);
          },
        });
        const queries: StreamingQuery[] = [];
        for (let i = 0; i < 10; i++) {
          session.memoryStream(`flood${i}`, 'v LONG').addData([{ v: i }]);
          queries.push(await session.readStream.format('memory').load(`flood${i}`).writeStream.format('memory').queryName(`flood${i}`).start());
        }
        for (const q of queries) await q.processAllAvailable();
        await sleep(300); // ten idle queries, an idle event every trigger
        for (const q of queries) await q.stop();
        await session.close();
        const ids = queries.map((q) => q.id).sort();
        expect([...seen.started].sort()).toEqual(ids);
        expect([...seen.progress].sort()).toEqual(ids);
        expect([...seen.terminated].sort()).toEqual(ids);
        const m = session.metrics().listenerBus;
        expect(m.numDroppedEventsByKind.onQueryIdle).toBeGreaterThan(0);
        expect(m.numDroppedEventsByKind.onQueryStarted).toBe(0);
        expect(m.numDroppedEventsByKind.onQueryTerminated).toBe(0);
        expect(m.numDroppedEventsByKind.onQueryProgress).toBe(0);
      },
    );
  });

  it('session.close() returns after the documented wait when a listener never settles, and counts what was left', async () => {
    const session = await Session.create({ conf: { 'sluice.executor.cores': 1, 'sluice.scheduler.listenerbus.closeTimeout': '300ms' } });
    session.streams.addListener({ onQueryStarted: () => new Promise(() => {}) });
    session.memoryStream('stuck', 'v LONG').addData([{ v: 1 }]);
    const q = await session.readStream.format('memory').load('stuck').writeStream.format('memory').queryName('stuck').start();
    await q.processAllAvailable();
    const t0 = Date.now();
    await session.close();
    expect(Date.now() - t0).toBeLessThan(5_000);
    // The started event is stuck in the listener; progress, idle and terminated wait behind it.
    expect(session.metrics().listenerBus.numUndeliveredEvents).toBe(4);
  });
});
