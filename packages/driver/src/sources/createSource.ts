/** Builds the running source of a query from its validated spec. */
import type { RuntimeConf } from '../conf.js';
import { FileStreamSource } from './FileStreamSource.js';
import { MemoryStreamSource } from './MemoryStream.js';
import { RateMicroBatchSource } from './RateMicroBatchSource.js';
import { RateSource } from './RateSource.js';
import type { SourceSpec } from './resolveSource.js';
import type { StreamSource } from './Source.js';

export function createSource(spec: SourceSpec, sourceDir: string, conf: RuntimeConf): StreamSource {
  switch (spec.format) {
    case 'json':
    case 'csv':
    case 'text':
      return new FileStreamSource(spec.file, sourceDir, conf.get<number>('sluice.sql.adaptive.advisoryPartitionSizeInBytes'));
    case 'rate':
      return new RateSource(spec.rowsPerSecond, spec.numPartitions, sourceDir);
    case 'rate-micro-batch':
      return new RateMicroBatchSource(spec.rateMicroBatch);
    case 'memory':
      return new MemoryStreamSource(spec.stream);
  }
}
