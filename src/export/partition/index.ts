/**
 * The machinery every stream kind's partitions share: the partition's plan and context, committing
 * a shard and the checkpoint after it, a refused resume cursor, and the read limit.
 */
export { commitShard, type KeyedWriter } from './commit-shard.js';
export { Committer, type CommitterOptions } from './committer.js';
export { ResumeCursorRefused } from './cursor-refused.js';
export { countOrUnknown } from './count-total.js';
export { drainPages, type PageSource } from './drain-pages.js';
export type { PartitionContext, PartitionOutcome } from './partition-context.js';
export type { PartitionPlan } from './partition-plan.js';
export type {
  CountClient,
  DryRunClient,
  EmptyRunClient,
  DryRunLines,
  DryRunStream,
  ListRequest,
  StreamDrain,
  StreamKind,
  StreamRun,
  StreamTotal,
} from './stream-kind.js';
export { namedFormats, streamName } from './stream-kind.js';
export { checkReadLimit, checkSeriesReadLimit, READ_LIMIT_SLACK, ReadLimitError, SERIES_READ_SLACK, type StreamRows } from './read-limit.js';
