import type { ChainPage } from '../../http/cursor-chain.js';
import { AbortedError, HttpStatusError } from '../../http/errors.js';
import { queryRefused } from '../../http/query-refused.js';
import type { SyncPage } from '../../http/sync-chain.js';
import type { Logger } from '../../log.js';
import type { OpenShard } from '../../sink/index.js';
import { crashPoint } from '../../util/crash-point.js';
import { prefetchOne } from '../../util/prefetch.js';
import type { PartState } from '../state/index.js';
import { commitShard } from './commit-shard.js';
import { ResumeCursorRefused } from './cursor-refused.js';
import type { PartitionContext, PartitionOutcome } from './partition-context.js';
import type { PartitionPlan } from './partition-plan.js';

/** Where a partition's pages come from: a cursor chain, or a change feed, from a checkpointed cursor on. */
export interface PageSource {
  /** The pages from `cursor` on (null: the first page). */
  pages(start: Pick<PartState, 'cursor' | 'lastPage'>): AsyncIterable<ChainPage | SyncPage>;
  /** A change feed: the cursor alone resumes it (a list chain's checkpoint also keeps its last page's fingerprint). */
  feed: boolean;
  /**
   * What to change in the job file when the platform refuses the chain's first request (400, no
   * cursor yet): the query itself is refused (E_QUERY_REFUSED, exit 2). Without it the 400 stays
   * an HTTP error.
   */
  queryFix?: string | undefined;
}

/**
 * Drains one partition's pages into shards, the next page fetched while one is written. A shard
 * closes at a page boundary once it reaches a size limit, at the end of the chain, or on
 * interruption; it is committed data first (files fsynced and renamed), checkpoint last, so the
 * checkpointed cursor never runs ahead of the rows on disk.
 */
export async function drainPages(
  ctx: PartitionContext,
  plan: PartitionPlan,
  log: Logger,
  source: PageSource,
): Promise<PartitionOutcome> {
  const start = ctx.committer.part(plan.stream.name, plan.m);
  const chain = prefetchOne(source.pages(start), (page) => page.release());
  let seq = start.nextSeq;
  let writers: OpenShard[] | undefined;
  /** The cursor after the last page held by the open writers: where a commit now would resume. */
  let heldCursor: string | undefined;
  /** A list chain's last page held by the open writers, its fingerprint: the checkpoint keeps it with the cursor. */
  let heldPage: string | undefined;
  let pages = 0;
  const commit = async (cursor: string | undefined, done = cursor === undefined) => {
    const rows = writers?.[0]?.rows ?? 0;
    const files = writers === undefined ? [] : await commitShard(ctx.store, plan, seq, writers);
    writers = undefined;
    if (files.length > 0) crashPoint('after-shard-rename');
    const lastPage = cursor === undefined ? undefined : heldPage;
    await ctx.committer.commit(plan.stream.name, plan.m, files, { cursor, rows, done, lastPage });
    if (files.length > 0) {
      log.debug({ seq, rows, cursor: cursor === undefined ? 'end' : 'next' }, 'shard committed');
      seq++;
    }
  };
  try {
    for await (const page of chain) {
      pages++;
      try {
        if (page.items.length > 0) {
          if (!source.feed) heldPage = page.items.fingerprint();
          writers ??= await ctx.sink.open(plan, seq);
          for (const writer of writers) await writer.append(page.items);
          ctx.onRows(page.items.length, plan);
          crashPoint('after-append');
        }
      } finally {
        page.release();
      }
      const last = 'caughtUp' in page ? page.caughtUp : page.nextCursor === undefined;
      const full = writers !== undefined && isFull(ctx, writers);
      if (last || full || (ctx.signal.aborted && writers !== undefined)) await commit(page.nextCursor, last);
      else if (writers !== undefined) heldCursor = page.nextCursor;
      if (last) return 'done';
      if (ctx.signal.aborted) return 'interrupted';
    }
    return 'done';
  } catch (error) {
    if (error instanceof AbortedError) {
      // Stopped while waiting for a page: the pages held are complete; commit them and stop.
      if (writers !== undefined && heldCursor !== undefined) await commit(heldCursor, false);
      return 'interrupted';
    }
    if (pages === 0 && start.cursor !== null && error instanceof HttpStatusError && error.status === 400) {
      throw new ResumeCursorRefused(error);
    }
    const fix = pages === 0 && start.cursor === null ? source.queryFix : undefined;
    throw (fix === undefined ? undefined : queryRefused(error, plan.stream.name, fix)) ?? error;
  } finally {
    if (writers !== undefined) await Promise.all(writers.map((w) => w.abort()));
  }
}

/** Whether the open shard reached a size limit in one of its formats: it closes at this page boundary. */
function isFull(ctx: PartitionContext, writers: readonly OpenShard[]): boolean {
  return writers.some((w) => w.rows >= ctx.limits.maxRows || w.bytes >= ctx.limits.maxBytes);
}
