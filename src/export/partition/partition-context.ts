import type { ChainClient } from '../../http/cursor-chain.js';
import type { PlatformClient } from '../../http/platform-client.js';
import type { SyncClient } from '../../http/sync-chain.js';
import type { Logger } from '../../log.js';
import type { OutputStore } from '../../output/index.js';
import type { ByteBudget } from '../../page/index.js';
import type { ShardSink } from '../../sink/index.js';
import type { Committer } from './committer.js';
import type { PartitionPlan } from './partition-plan.js';

/** What draining a partition needs from its run. */
export interface PartitionContext {
  /** Where committed shards go (a folder: they are in place already; a bucket: uploaded). */
  store: OutputStore;
  /** Lists pages, posts the requests of a sync feed, and reads a subscription's answers. */
  client: ChainClient & SyncClient & Pick<PlatformClient, 'post'>;
  /** The run's budget of response bytes held at once (source.maxBufferedBytes). */
  budget?: ByteBudget | undefined;
  committer: Committer;
  /** Opens the shards of a partition (a kind opens its own: rows of items, or datapoints). */
  sink: Pick<ShardSink, 'open' | 'openPoints'>;
  limits: { maxRows: number; maxBytes: number };
  /** Aborted on SIGINT/SIGTERM: the drain commits what it holds and stops. */
  signal: AbortSignal;
  logger: Logger;
  /** Rows of a page written by the partition `plan`; throws (ReadLimitError) to stop the partition. */
  onRows(rows: number, plan: PartitionPlan): void;
  /** Series of a partition read to their end (or unknown to the platform), for a kind that reads series. */
  onSeriesDone?(count: number, plan: PartitionPlan): void;
}

export type PartitionOutcome = 'done' | 'skipped' | 'interrupted';
