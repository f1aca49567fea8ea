import { type ChainPage, drainCursorChain } from '../../http/cursor-chain.js';
import { drainSyncFeed, type SyncPage } from '../../http/sync-chain.js';
import { AbortedError, HttpStatusError } from '../../http/errors.js';
import type { Logger } from '../../log.js';
import type { OpenShard } from '../../sink/index.js';
import { crashPoint } from '../../util/crash-point.js';
import { TEMP_SUFFIX } from '../../util/durable-file.js';
import { prefetchOne } from '../../util/prefetch.js';
import { chainRequest, drainPoints, instancesCheck, instancesRequest, instancesSyncRequest, type PointsContext } from '../kinds/index.js';
import { isOwnedKey, type PartState, removeOwnedTree, shardSeq } from '../state/index.js';
import { commitShard, type PartitionContext, type PartitionOutcome, type PartitionPlan, ResumeCursorRefused, syncCursorRefused } from '../partition/index.js';

/** What the run gives each partition: every kind's context. */
export type DrainContext = PartitionContext & PointsContext;

/**
 * Drains one partition into shards. A shard closes at a page boundary once it reaches a size limit,
 * at the end of the chain, or on interruption; it is committed data first (files fsynced and
 * renamed), checkpoint last, so the checkpointed cursor never runs ahead of the rows on disk.
 */
export async function drainPartition(ctx: DrainContext, plan: PartitionPlan): Promise<PartitionOutcome> {
  const log = ctx.logger.child({ stream: plan.stream.name, partition: `${plan.m}/${plan.n}` });
  if (ctx.committer.part(plan.stream.name, plan.m).done) return 'skipped';
  await removeLeftovers(ctx, plan);
  const read = () => (plan.stream.resource === 'datapoints' ? drainPoints(ctx, plan, log) : drain(ctx, plan, log));
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof ResumeCursorRefused)) throw error;
    // A change feed's cursor holds the deletes since the last run: reading again from the start would lose them.
    const state = ctx.committer.state.streams[plan.stream.name];
    if (isSyncFeed(plan) && state !== undefined && state.watermark !== null) {
      throw syncCursorRefused(error.cause, plan, state);
    }
    log.warn(
      { status: error.cause.status, requestId: error.cause.requestId, reason: error.cause.platformMessage },
      'the platform refused the checkpointed cursor (expired?); deleting this partition\'s shards and reading it again from its first page',
    );
    // Forget first, delete second: a crash in between leaves files the next run removes as leftovers.
    await ctx.committer.restart(plan.stream.name, plan.m);
    await removeOwnedTree(ctx.store, plan.dir, ctx.logger);
    return read();
  }
}

async function drain(ctx: PartitionContext, plan: PartitionPlan, log: Logger): Promise<PartitionOutcome> {
  const start = ctx.committer.part(plan.stream.name, plan.m);
  const chain = pagesFrom(ctx, plan, start);
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
          if (!isSyncFeed(plan)) heldPage = page.items.fingerprint();
          writers ??= await ctx.openShard(plan, seq);
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
    throw error;
  } finally {
    if (writers !== undefined) await Promise.all(writers.map((w) => w.abort()));
  }
}

/**
 * The partition's pages from `cursor` on (null: its first page), the next fetched while one is
 * written: a cursor chain, or an incremental instances stream's sync feed until it has caught up.
 * An instances stream's pages are checked against their query (instancesCheck).
 */
function pagesFrom(
  ctx: PartitionContext,
  plan: PartitionPlan,
  { cursor, lastPage }: Pick<PartState, 'cursor' | 'lastPage'>,
): AsyncIterable<ChainPage | SyncPage> {
  const { stream } = plan;
  const checkItems = stream.resource === 'instances' ? instancesCheck(stream, plan.m) : undefined;
  const common = { startCursor: cursor ?? undefined, signal: ctx.signal, budget: ctx.budget, checkItems };
  const pages: AsyncIterable<ChainPage | SyncPage> = isSyncFeed(plan)
    ? drainSyncFeed(ctx.client, { ...instancesSyncRequest(stream, plan.m), ...common })
    : drainCursorChain(ctx.client, {
        ...(stream.resource === 'instances' ? instancesRequest(stream, plan.m) : chainRequest(stream.resource, plan.params)),
        ...common,
        seenPage: cursor === null ? undefined : lastPage,
      });
  return prefetchOne(pages, (page) => page.release());
}

/** An incremental instances stream reads the platform's sync feed, not a list. */
function isSyncFeed(plan: PartitionPlan): boolean {
  return plan.stream.resource === 'instances' && plan.stream.mode === 'incremental';
}

/** Whether the open shard reached a size limit in one of its formats: it closes at this page boundary. */
function isFull(ctx: PartitionContext, writers: readonly OpenShard[]): boolean {
  return writers.some((w) => w.rows >= ctx.limits.maxRows || w.bytes >= ctx.limits.maxBytes);
}

/**
 * Deletes what a crash left in the partition's folder: unfinished temp files, and shards at or past
 * the checkpoint's next sequence number (renamed into place, but never checkpointed).
 */
async function removeLeftovers(ctx: PartitionContext, plan: PartitionPlan): Promise<void> {
  const { nextSeq } = ctx.committer.part(plan.stream.name, plan.m);
  const left = (await ctx.store.list(`${plan.dir}/`)).filter((key) => {
    const name = key.slice(plan.dir.length + 1);
    const seq = shardSeq(name);
    const mine = !name.includes('/') && isOwnedKey(key);
    return mine && (name.endsWith(TEMP_SUFFIX) || (seq !== undefined && seq >= nextSeq));
  });
  for (const key of left) ctx.logger.info({ file: ctx.store.where(key) }, 'removing a file written after the last checkpoint');
  await ctx.store.remove(left);
}
