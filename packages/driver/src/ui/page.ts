/**
 * The dashboard page: one table row per query (status, pool, last batch, watermark, exception)
 * and, per query, charts of input rate, process rate, batch duration (with its durationMs parts)
 * and state rows (uPlot), kept live by the server's event stream, with the recent progress
 * events below. Each chart's element carries `data-points`, the points it shows.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sluice: streaming queries</title>
<link rel="stylesheet" href="/static/uPlot.min.css">
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
  table { border-collapse: collapse; margin-bottom: 1.5em; }
  th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; }
  .charts { display: flex; flex-wrap: wrap; gap: 12px; margin-bottom: 1.5em; }
  .failed { color: #b00; }
  pre { background: #f6f6f6; padding: 8px; max-height: 16em; overflow: auto; font-size: 12px; }
</style>
<script src="/static/uPlot.iife.min.js"></script>
</head>
<body>
<h1>Streaming queries</h1>
<table id="queries"><thead><tr><th>name</th><th>id</th><th>status</th><th>pool</th><th>last batch</th><th>watermark</th><th>exception</th></tr></thead><tbody></tbody></table>
<div id="detail"></div>
<h2>Recent progress</h2>
<pre id="recent"></pre>
<script>
const queries = new Map();
const SERIES = [
  ['input', 'input rows/s', (p) => p.inputRowsPerSecond],
  ['processed', 'processed rows/s', (p) => p.processedRowsPerSecond],
  ['duration', 'batch duration (ms)', (p) => p.batchDuration],
  ['state', 'state rows', (p) => p.stateOperators.reduce((n, o) => n + o.numRowsTotal, 0)],
];
const recent = [];
function text(v) { return v === null || v === undefined ? '' : String(v); }
function render() {
  const body = document.querySelector('#queries tbody');
  body.innerHTML = '';
  for (const q of queries.values()) {
    const last = q.progress[q.progress.length - 1];
    const tr = document.createElement('tr');
    tr.dataset.queryId = q.id;
    for (const v of [q.name, q.id, q.status, q.pool, last && last.batchId, last && last.eventTime.watermark, q.exception]) {
      const td = document.createElement('td');
      td.textContent = text(v);
      tr.appendChild(td);
    }
    if (q.status === 'failed') tr.className = 'failed';
    body.appendChild(tr);
    chart(q);
  }
  document.getElementById('recent').textContent = recent.map((p) => JSON.stringify(p)).join('\\n');
}
function chart(q) {
  let box = document.getElementById('q-' + q.id);
  if (!box) {
    box = document.createElement('section');
    box.id = 'q-' + q.id;
    box.innerHTML = '<h2></h2><div class="charts"></div>';
    box.querySelector('h2').textContent = q.name || q.id;
    document.getElementById('detail').appendChild(box);
    q.charts = {};
    for (const [key, label] of SERIES) {
      const el = document.createElement('div');
      el.className = 'chart chart-' + key;
      box.querySelector('.charts').appendChild(el);
      const series = [{}, { label, stroke: '#36c' }];
      if (key === 'duration') for (const part of ['addBatch', 'walCommit', 'commitOffsets']) series.push({ label: part, stroke: part === 'addBatch' ? '#c63' : '#6a3' });
      q.charts[key] = { el, plot: new uPlot({ title: label, width: 360, height: 180, series }, [[], []].concat(key === 'duration' ? [[], [], []] : []), el) };
    }
  }
  const xs = q.progress.map((p) => Date.parse(p.timestamp) / 1000);
  for (const [key, , value] of SERIES) {
    const c = q.charts[key];
    const data = [xs, q.progress.map(value)];
    if (key === 'duration') for (const part of ['addBatch', 'walCommit', 'commitOffsets']) data.push(q.progress.map((p) => p.durationMs[part] || 0));
    c.plot.setData(data);
    c.el.dataset.points = String(xs.length);
  }
}
fetch('/api/queries').then((r) => r.json()).then((list) => {
  for (const q of list) queries.set(q.id, q);
  render();
  const events = new EventSource('/events');
  events.addEventListener('query', (e) => {
    const q = JSON.parse(e.data);
    const known = queries.get(q.id);
    queries.set(q.id, Object.assign(known || { progress: [] }, q, { progress: known ? known.progress : [] }));
    render();
  });
  events.addEventListener('progress', (e) => {
    const p = JSON.parse(e.data);
    const q = queries.get(p.id) || { id: p.id, name: p.name, pool: p.schedulerPool, status: 'active', exception: null, progress: [] };
    q.status = 'active';
    q.progress.push(p);
    if (q.progress.length > 100) q.progress.shift();
    queries.set(p.id, q);
    recent.unshift(p);
    if (recent.length > 20) recent.pop();
    render();
  });
});
</script>
</body>
</html>
`;
