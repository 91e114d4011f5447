/** Builds the running source of a query from its validated spec. */
import { CONF_KEYS, SluiceError } from '@sluice/state';
import type { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import { FileStreamSource } from './FileStreamSource.js';
import { DeltaSource } from '../delta/DeltaSource.js';
import { MemoryStreamSource } from './MemoryStream.js';
import { NexmarkSource } from './NexmarkSource.js';
import { RateMicroBatchSource } from './RateMicroBatchSource.js';
import { RateSource } from './RateSource.js';
import { RedisStreamSource } from './RedisStreamSource.js';
import type { SourceSpec } from './resolveSource.js';
import type { StreamSource } from './Source.js';

/** Source `index` of a query, its own files under `paths`. */
export function createSource(spec: SourceSpec, index: number, paths: CheckpointPaths, conf: RuntimeConf): StreamSource {
  switch (spec.format) {
    case 'json':
    case 'csv':
    case 'text':
    case 'parquet':
      return new FileStreamSource(spec.file, paths.source(index), taskBytes(conf), conf.get(CONF_KEYS.fileSourceLogCompactInterval));
    case 'delta':
      if (!('stream' in spec.delta))
        throw new SluiceError('UNSUPPORTED_OPERATION', 'a Delta table read with session.read is static: read it with readStream to stream it', {
          option: 'format',
        });
      return new DeltaSource(spec.delta, spec.delta.stream, spec.schema, taskBytes(conf));
    case 'rate':
      return new RateSource(spec.rowsPerSecond, spec.numPartitions, paths.rateStart(index));
    case 'rate-micro-batch':
      return new RateMicroBatchSource(spec.rateMicroBatch);
    case 'nexmark':
      return new NexmarkSource(spec.nexmark, paths.rateStart(index));
    case 'memory':
      return new MemoryStreamSource(spec.stream);
    case 'redis':
      return new RedisStreamSource(spec.redis, paths.redisStart(index), spec.schema);
    case 'sqlite':
      throw new SluiceError('UNSUPPORTED_OPERATION', 'a sqlite table is a static source: read it with session.read, and join a stream with it', {
        option: 'format',
      });
    case 'values':
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        'rows given to the session (createDataFrame, VALUES) are a static source: collect() it, or join a stream with it',
        { option: 'format' },
      );
  }
}

/** Target input bytes of one task; with adaptive sizing off every file is a task of its own. */
function taskBytes(conf: RuntimeConf): number {
  return conf.get(CONF_KEYS.adaptiveStatelessEnabled) ? conf.get(CONF_KEYS.advisoryPartitionSizeInBytes) : 0;
}
