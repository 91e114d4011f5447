/**
 * The live dashboard (Spark UI's Structured Streaming tab): `session.startUI()` serves a page
 * listing the session's queries with their charts, pushes each progress event to it over SSE,
 * and serves `/metrics` (Prometheus text) from the same server.
 *
 * node:http rather than a framework: the server has five fixed, read-only GET routes and one
 * event stream, and nothing a framework would add (routing by pattern, body parsing, plugins) is
 * used. It binds to 127.0.0.1 unless told otherwise. Paths are matched exactly against that fixed
 * list, never mapped onto the file system, so no path can reach another file: anything else,
 * traversal attempts included, is 404.
 */
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SluiceError } from '@sluice/state';
import type { StreamingQueryProgress } from '../events/progress.js';
import type { StreamingQueryListener } from '../events/ListenerBus.js';
import { DASHBOARD_HTML } from './page.js';
import { resolveOptional } from '../optionalDependency.js';

/** The part of a session the dashboard reads. */
export interface UISession {
  streams: {
    active: Array<{ id: string; name: string | null; schedulerPool: string; recentProgress: StreamingQueryProgress[]; status: { message: string } }>;
    addListener(l: StreamingQueryListener): void;
    removeListener(l: StreamingQueryListener): void;
  };
  prometheusMetrics(): Promise<string>;
  prometheusContentType: string;
}

/** The options of `session.startUI`. */
export interface UIOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The address to listen on (default 127.0.0.1: this machine only). */
  host?: string;
}

/** The dashboard `session.startUI` serves. */
export interface UIHandle {
  /** Its address, such as `http://127.0.0.1:4040/`. */
  url: string;
  /** The port it listens on. */
  port: number;
  /** Stops serving (`session.close()` does too). */
  close(): Promise<void>;
}

interface QueryView {
  id: string;
  name: string | null;
  pool: string;
  status: string;
  exception: string | null;
  progress: StreamingQueryProgress[];
}

const RECENT = 100;

const uplotFile = (name: string): Buffer => readFileSync(resolveOptional('uplot', 'the dashboard', 'startUI', `dist/${name}`));

export async function startUI(session: UISession, options: UIOptions = {}): Promise<UIHandle> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new SluiceError('INVALID_OPTION', `the UI port must be 0 to 65535, got ${port}`, { option: 'port' });
  // The page's charts and /metrics: a missing package fails here, not at the first request.
  resolveOptional('uplot', 'the dashboard', 'startUI', 'dist/uPlot.iife.min.js');
  resolveOptional('prom-client', "the dashboard's /metrics", 'startUI');
  const views = new Map<string, QueryView>();
  for (const q of session.streams.active) {
    views.set(q.id, { id: q.id, name: q.name, pool: q.schedulerPool, status: q.status.message, exception: null, progress: q.recentProgress.slice(-RECENT) });
  }
  const clients = new Set<ServerResponse>();
  const push = (event: string, data: unknown): void => {
    const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const c of clients) c.write(text);
  };
  const listener: StreamingQueryListener = {
    onQueryStarted: (e) => {
      const active = session.streams.active.find((q) => q.id === e.id);
      const view: QueryView = { id: e.id, name: e.name, pool: active?.schedulerPool ?? 'default', status: 'started', exception: null, progress: [] };
      views.set(e.id, view);
      push('query', view);
    },
    onQueryProgress: ({ progress }) => {
      const view = views.get(progress.id) ?? {
        id: progress.id,
        name: progress.name,
        pool: progress.schedulerPool,
        status: 'active',
        exception: null,
        progress: [],
      };
      view.status = 'active';
      view.progress.push(progress);
      if (view.progress.length > RECENT) view.progress.shift();
      views.set(progress.id, view);
      push('progress', progress);
    },
    onQueryTerminated: (e) => {
      const view = views.get(e.id);
      if (!view) return;
      view.status = e.exception ? 'failed' : 'stopped';
      view.exception = e.exception ?? null;
      push('query', { ...view, progress: undefined });
    },
  };
  session.streams.addListener(listener);

  const statics: Record<string, { type: string; body: () => Buffer | string }> = {
    '/': { type: 'text/html; charset=utf-8', body: () => DASHBOARD_HTML },
    '/static/uPlot.iife.min.js': { type: 'text/javascript; charset=utf-8', body: () => uplotFile('uPlot.iife.min.js') },
    '/static/uPlot.min.css': { type: 'text/css; charset=utf-8', body: () => uplotFile('uPlot.min.css') },
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end('read-only\n');
      return;
    }
    const file = statics[path];
    if (file) {
      res.writeHead(200, { 'Content-Type': file.type }).end(file.body());
      return;
    }
    if (path === '/api/queries') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify([...views.values()]));
      return;
    }
    if (path === '/metrics') {
      session.prometheusMetrics().then(
        (text) => res.writeHead(200, { 'Content-Type': session.prometheusContentType }).end(text),
        (e: Error) => res.writeHead(500).end(`${e.message}\n`),
      );
      return;
    }
    if (path === '/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      res.write(': connected\n\n');
      clients.add(res);
      req.on('close', () => clients.delete(res));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new SluiceError('INVALID_OPTION', `cannot serve the UI on ${host}:${port}: ${e.message}`, { option: 'port', cause: e })),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`,
    port: bound,
    close() {
      closed ??= new Promise<void>((resolve) => {
        session.streams.removeListener(listener);
        for (const c of clients) c.end();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
