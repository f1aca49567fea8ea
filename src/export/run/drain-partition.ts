import { TEMP_SUFFIX } from '../../util/durable-file.js';
import { type PartitionContext, type PartitionOutcome, type PartitionPlan, ResumeCursorRefused, type StreamDrain } from '../partition/index.js';
import { isOwnedKey, removeOwnedTree, shardSeq } from '../state/index.js';
import { streamKind } from '../kinds/index.js';

/**
 * Drains one partition into shards, as its stream's kind reads it (`drain`), after removing what a
 * crash left in its folder. A resume cursor the platform refuses makes the partition start again
 * from its first page, its shards deleted, unless its kind refuses that (a change feed's cursor).
 */
export async function drainPartition(
  ctx: PartitionContext,
  plan: PartitionPlan,
  drain: StreamDrain,
): Promise<PartitionOutcome> {
  const log = ctx.logger.child({ stream: plan.stream.name, partition: `${plan.m}/${plan.n}` });
  if (ctx.committer.part(plan.stream.name, plan.m).done) return 'skipped';
  await removeLeftovers(ctx, plan);
  const read = () => drain.drain(ctx, plan, log);
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof ResumeCursorRefused)) throw error;
    const state = ctx.committer.state.streams[plan.stream.name];
    const refusal = streamKind(plan.stream.resource).cursorRefused(error.cause, plan, state);
    if (refusal !== undefined) throw refusal;
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
