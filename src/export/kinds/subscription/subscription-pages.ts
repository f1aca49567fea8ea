import { CheckpointError } from '../../../errors.js';
import { HttpStatusError } from '../../../http/errors.js';
import type { SyncPage } from '../../../http/sync-chain.js';
import { drainSubscriptionFeed, type SubscriptionPage } from '../../../http/subscription-feed.js';
import { PageItems } from '../../../page/index.js';
import { type ChangeRow, changeRows } from '../../../resources/index.js';
import { type PageSource, type PartitionContext, type PartitionPlan, ResumeCursorRefused } from '../../partition/index.js';
import type { SubscriptionStreamPlan } from '../../state/index.js';

const NO_BYTES = Buffer.alloc(0);

/**
 * The pages of partition m of a subscription stream: each of its subscription partitions
 * (ownedPartitions), one after another, each read until the platform says nothing more is there.
 * The checkpoint's cursor holds every one of them (`{"<index>": "<cursor>"}`): a resumed run goes
 * on from each where its last commit left it. A page's change rows are numbered on from the rows
 * the partition has committed in this run (changeOrder), so that a resumed run neither restarts
 * nor repeats the numbers.
 */
export function subscriptionPages(
  ctx: PartitionContext,
  plan: PartitionPlan<SubscriptionStreamPlan>,
  owned: readonly number[],
): PageSource {
  const { stream } = plan;
  return {
    feed: true,
    pages: ({ cursor }) => {
      const cursors = readCursors(cursor, stream.name, plan.m);
      const firstOrder = ctx.committer.part(stream.name, plan.m).rows;
      return changePages(ctx, stream, owned, cursors, firstOrder);
    },
  };
}

async function* changePages(
  ctx: PartitionContext,
  stream: SubscriptionStreamPlan,
  owned: readonly number[],
  cursors: Map<number, string>,
  firstOrder: number,
): AsyncGenerator<SyncPage, void, undefined> {
  const { externalId, initializeCursors, includeStatus } = stream.subscription;
  const { ignoreBadDataPoints, treatUncertainAsBad } = stream.subscription;
  let order = firstOrder;
  if (owned.length === 0) {
    // No partition of the subscription is this one's: it is read to its end at once.
    yield page([], cursors, { cursor: undefined, requestId: undefined, attempts: 0 }, true);
    return;
  }
  for (const [i, partition] of owned.entries()) {
    const startCursor = cursors.get(partition);
    const request = {
      externalId,
      partition,
      startCursor,
      initializeCursors,
      limit: stream.subscription.limit,
      includeStatus,
      ignoreBadDataPoints,
      treatUncertainAsBad,
      signal: ctx.signal,
    };
    let first = true;
    try {
      for await (const answer of drainSubscriptionFeed(ctx.client, request)) {
        first = false;
        const rows: ChangeRow[] = [];
        for (const update of answer.updates) rows.push(...changeRows(update, order + rows.length, includeStatus));
        order += rows.length;
        cursors.set(partition, answer.nextCursor);
        yield page(rows, cursors, answer, answer.caughtUp && i === owned.length - 1);
      }
    } catch (error) {
      // The cursor a checkpoint kept, refused on its first request (expired): the kind decides.
      if (first && startCursor !== undefined && error instanceof HttpStatusError && error.status === 400) {
        throw new ResumeCursorRefused(error);
      }
      throw error;
    }
  }
}

/** A page of change rows as drainPages takes it: the cursors after it, and whether the partition is read to now. */
function page(
  rows: ChangeRow[],
  cursors: ReadonlyMap<number, string>,
  answer: Pick<SubscriptionPage, 'cursor' | 'requestId' | 'attempts'>,
  caughtUp: boolean,
): SyncPage {
  const { cursor, requestId, attempts } = answer;
  return {
    items: PageItems.of(rows.map(asLine)),
    bytes: NO_BYTES,
    cursor,
    nextCursor: JSON.stringify(Object.fromEntries(cursors)),
    caughtUp,
    requestId,
    attempts,
    release: () => {},
  };
}

/** A row as its NDJSON line holds it: a bad value as the platform's text (`"NaN"`), as JSON has no such number. */
function asLine(row: ChangeRow): ChangeRow | (Omit<ChangeRow, 'value'> & { value: string }) {
  const { value } = row;
  return value === null || Number.isFinite(value) ? row : { ...row, value: String(value) };
}

/** The cursors a checkpoint kept for a partition (`{"<index>": "<cursor>"}`); none before its first commit. */
function readCursors(saved: string | null, stream: string, m: number): Map<number, string> {
  if (saved === null) return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(saved);
  } catch {
    parsed = undefined;
  }
  const entries = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? Object.entries(parsed) : undefined;
  if (entries === undefined || entries.some(([index, cursor]) => !/^\d+$/.test(index) || typeof cursor !== 'string' || cursor === '')) {
    throw new CheckpointError(
      `the checkpoint's cursor of stream ${stream}, partition ${m} is not the subscription cursors this build writes ` +
      `({"<partition>": "<cursor>"}): run with --fresh --stream ${stream} to start the stream again`,
    );
  }
  return new Map(entries.map(([index, cursor]) => [Number(index), cursor as string]));
}
