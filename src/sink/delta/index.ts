/**
 * sink/delta: a Delta table's data files as the protocol wants them (its schemaString, timestamps
 * in microseconds) and their per-file stats. The log itself is output/'s (output/delta).
 */
export {
  type DeltaColumn,
  deltaColumns,
  deltaDataSchema,
  deltaSchema,
  deltaSchemaString,
  type DeltaStructType,
  type DeltaType,
  toDeltaBatch,
  toDeltaTable,
} from './schema.js';
export { DeltaBatches } from './delta-batches.js';
export { type DeltaStats, deltaStats, DeltaStatsCollector, deltaStatsJson } from './stats.js';
