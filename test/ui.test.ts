/**
 * The live dashboard: its HTTP routes (the page, /api/queries, /events, /metrics), 404 for
 * anything else and for traversal attempts, loopback-only binding by default, and the page in a
 * real headless Chromium (Debian's, driven by playwright-core): the query is listed, its
 * batch-duration chart has a point per batch, and a new batch shows up without a reload.
 */
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { col, Session, window, type StreamingQuery } from '@sluice/driver';
import { machineHas, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = () => machineHas("Debian's chromium", existsSync(CHROMIUM), 'install it with apt-get install -y chromium, as .ci/run does');

/** A raw GET (the path is sent exactly as given, unlike fetch, which resolves `..`). */
function get(port: number, path: string, method = 'GET', host = '127.0.0.1'): Promise<{ status: number; body: string; type: string | undefined }> {
  return new Promise((resolve, reject) => {
    // A fresh connection each time (no keep-alive agent): a closed server must refuse it.
    const req = request({ host, port, path, method, timeout: 5_000, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: res.headers['content-type'] }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function withQuery<T>(fn: (q: StreamingQuery, add: (b: number) => Promise<void>, url: string, port: number) => Promise<T>): Promise<T> {
  const s = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 } });
  try {
    const input = s.memoryStream('clicks', 'page STRING, t TIMESTAMP');
    const q = await s.readStream
      .format('memory')
      .load('clicks')
      .withWatermark('t', '10 seconds')
      .groupBy(window(col('t'), '10 seconds'), 'page')
      .count()
      .writeStream.format('memory')
      .queryName('page_counts')
      .outputMode('update')
      .start();
    const ui = await s.startUI({ port: 0 });
    const add = async (b: number) => {
      input.addData([{ page: `p${b % 3}`, t: new Date(b * 10_000) }]);
      await q.processAllAvailable();
    };
    try {
      return await fn(q, add, ui.url, ui.port);
    } finally {
      await ui.close();
    }
  } finally {
    await s.close();
  }
}

describe('dashboard', () => {
  it('serves the page, the queries, the event stream and /metrics; everything else, traversal included, is 404; it is read-only', async () => {
    await withQuery(async (q, add, url, port) => {
      for (let b = 0; b < 3; b++) await add(b);
      // Data batches and the no-data batches the watermark makes due.
      const batches = q.recentProgress.length;
      expect(url).toBe(`http://127.0.0.1:${port}/`);
      const page = await get(port, '/');
      expect(page.status).toBe(200);
      expect(page.body).toContain('<title>Sluice');
      const queries = JSON.parse((await get(port, '/api/queries')).body) as Array<{ name: string; pool: string; progress: unknown[] }>;
      expect(queries.map((v) => [v.name, v.pool, v.progress.length])).toEqual([['page_counts', 'default', batches]]);
      const metrics = await get(port, '/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.type).toMatch(/^text\/plain/);
      expect(metrics.body).toContain(`sluice_query_batches_total{query_name="page_counts",query_id="${q.id}"} ${batches}\n`);
      expect((await get(port, '/static/uPlot.iife.min.js')).status).toBe(200);
      for (const path of [
        '/nope',
        '/../package.json',
        '/%2e%2e/package.json',
        '/static/../../package.json',
        '/static/%2e%2e%2f%2e%2e%2fpackage.json',
        '/static/..%5c..%5cpackage.json',
        '//etc/passwd',
      ]) {
        expect((await get(port, path)).status, path).toBe(404);
      }
      expect((await get(port, '/', 'POST')).status).toBe(405);
    });
  });

  it('binds to loopback only unless told otherwise', async () => {
    await withQuery(async (_s, _add, _url, port) => {
      const others = Object.values(networkInterfaces())
        .flat()
        .filter((i) => i && !i.internal && i.family === 'IPv4');
      for (const i of others) await expect(get(port, '/', 'GET', (i as { address: string }).address)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      // Reachable on loopback, whatever the interfaces.
      expect((await get(port, '/')).status).toBe(200);
    });
  });

  it('sluice.ui.enabled serves it from Session.create, and session.close() stops it', async () => {
    const s = await Session.create({ conf: { 'sluice.ui.enabled': true, 'sluice.ui.port': 0 } });
    const port = s.ui?.port as number;
    try {
      expect((await get(port, '/metrics')).status).toBe(200);
    } finally {
      await s.close();
    }
    await expect(get(port, '/')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it.skipIf(!hasChromium())(
    'shows the query and its charts in headless Chromium, and a new batch without a reload',
    async () => {
      expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: .ci/run installs Debian's chromium (apt-get install -y chromium)`).toBe(true);
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
        timeout: 30_000,
      });
      try {
        await withQuery(async (_s, add, url) => {
          const N = 4;
          for (let b = 0; b < N; b++) await add(b);
          const page = await browser.newPage();
          await page.goto(url);
          await page.locator('#queries td', { hasText: 'page_counts' }).first().waitFor({ timeout: 15_000 });
          const points = () => page.locator('.chart-duration').first().getAttribute('data-points').then(Number);
          const shown = (op: string, n: number) =>
            page.waitForFunction(`Number(document.querySelector('.chart-duration')?.getAttribute('data-points')) ${op} ${n}`, undefined, { timeout: 15_000 });
          await shown('>=', N);
          expect(await points()).toBeGreaterThanOrEqual(N);
          const before = await points();
          await add(N);
          // Pushed over the event stream: no reload.
          await shown('>', before);
          expect(await page.locator('#recent').textContent()).toContain('"name":"page_counts"');
          const shot = join(tempDir(), 'dashboard.png');
          await page.screenshot({ path: shot });
          expect(existsSync(shot)).toBe(true);
        });
      } finally {
        await browser.close();
      }
    },
    90_000,
  );
});
