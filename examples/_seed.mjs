import { Session, window, col } from '@sluice/driver';
import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
const cores = Number(process.argv[2] ?? 2), rows = Number(process.argv[3] ?? 1000000);
const s = await Session.create({ conf: { 'sluice.executor.cores': cores, 'sluice.sql.shuffle.partitions': 200 } });
const q = await s.readStream.format('rate-micro-batch').option('rowsPerBatch', rows).option('advanceMillisPerBatch', 1000).load()
  .withColumn('id', col('value').mod(100000)).withWatermark('timestamp', '10 minutes')
  .groupBy(window('timestamp', '5 minutes'), 'id').count()
  .writeStream.format('memory').queryName('seed').outputMode('append').option('checkpointLocation', mkdtempSync(join(tmpdir(), 'seed-'))).start();
while ((q.lastProgress?.batchId ?? -1) < Number(process.argv[4] ?? 7)) await new Promise((r) => setTimeout(r, 50));
await q.stop();
for (const p of q.recentProgress.slice(2)) console.log(p.batchId, p.numInputRows, JSON.stringify(p.durationMs), p.stateOperators[0]?.commitTimeMs, p.stateOperators[0]?.numRowsTotal);
await s.close();
