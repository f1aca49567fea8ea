import { splitFilters, splitScopes } from '../../../config/instances-schema.js';
import { ConfigError } from '../../../errors.js';
import { refusedAccess } from '../../../http/access-refused.js';
import type { AccessError, AuthError } from '../../../http/errors.js';
import type { InstancesStreamConfig } from '../../../config/job-schema.js';
import { drainCursorChain } from '../../../http/cursor-chain.js';
import { drainSyncFeed } from '../../../http/sync-chain.js';
import {
  countOrUnknown,
  namedFormats,
  drainPages,
  type DryRunClient,
  type PageSource,
  type PartitionContext,
  type PartitionPlan,
  type StreamKind,
} from '../../partition/index.js';
import type { InstancesStreamPlan, StreamPlan } from '../../state/index.js';
import { countInstances, instancesCheck, instancesRequest, instancesSyncRequest, readViewColumns } from './instances-request.js';
import { syncCursorRefused } from './sync-cursor-refused.js';

/**
 * Data-model instances of one view: each partition one query (a `split` of the stream's filter),
 * read whole by `POST /models/instances/list`, or, incremental, followed by the sync feed from
 * where the last run ended.
 */
export const instances: StreamKind<InstancesStreamConfig, InstancesStreamPlan> = {
  plan: (stream, defaultFormats) => {
    const { view, instanceType, spaces, filter, split } = stream;
    const queries = splitFilters(stream);
    // Everything that decides which instances are read and how, so that a change between runs is drift.
    const params: [string, string][] = [
      ['limit', String(stream.limit)],
      ['instanceType', instanceType],
      ['view', `${view.space}:${view.externalId}/${view.version}`],
    ];
    if (spaces !== undefined) params.push(['spaces', JSON.stringify(spaces)]);
    if (filter !== undefined) params.push(['filter', canonicalValue(filter)]);
    if (split !== undefined) params.push(['split', canonicalValue(split)]);
    return {
      ...namedFormats(stream, defaultFormats),
      resource: 'instances',
      params,
      partitions: queries.length,
      mode: stream.mode,
      safetyLagMs: 0,
      keep: stream.keep,
      updatedBetween: { min: undefined, max: undefined },
      instances: {
        view,
        instanceType,
        queries,
        scopes: splitScopes(stream),
        filter: splitFilters({ ...stream, split: undefined })[0],
        allowExpiredCursors: stream.allowExpiredCursorsAndAcceptMissedDeletes,
      },
    };
  },
  // No window: an incremental run follows the sync cursor.
  chainParams: (stream) => [...stream.params],
  // The API has no `partition`: a partition is a query of the split.
  partitionParam: 'query',
  count: async (client, stream, state, logger, signal) => {
    // The view is read (which proves the credential) unless the stream began already: its
    // columns then come from the checkpoint, and its files keep their schema.
    const columns = state.instances?.columns ?? (await readViewColumns(client, stream, signal));
    state.instances = { columns };
    stream.instances.columns = columns;
    const items = await countOrUnknown(
      () => countInstances(client, stream, signal),
      (error) =>
        logger.info(
          { stream: stream.name, code: error.code },
          `no instance count for ${stream.name} (progress shows no total, and no read limit applies): ${error.message}`,
        ),
    );
    return items === undefined ? {} : { items };
  },
  start: () => ({ drain: (ctx, plan, log) => drainPages(ctx, plan, log, pagesOf(ctx, plan)) }),
  // A change feed's cursor holds the deletes since the last run: reading again from the start would lose them.
  cursorRefused: (cause, plan, state) => {
    const changes = isSyncFeed(plan.stream) && state !== undefined && state.watermark !== null;
    return changes ? syncCursorRefused(cause, plan, state) : undefined;
  },
  listedCollection: () => undefined,
  firstRequest: (stream) => {
    if (!isSyncFeed(stream)) return instancesRequest(stream, 1);
    const { path, body } = instancesSyncRequest(stream, 1);
    return { method: 'POST', path, body };
  },
  dryRun: async (client, { plan, listed, written, since, action }) => {
    const queries = plan.partitions === 1 ? '1 query' : `${plan.partitions} queries (split), each its own cursor chain`;
    const lines = [`stream ${plan.name}: ${listed} in ${queries} -> ${written}`];
    const columns = await viewColumns(client, plan);
    if (typeof columns === 'string') lines.push(`  columns: ${columns}`);
    if (plan.mode !== 'incremental') lines.push(`  ${action()}`);
    else lines.push(`  ${feedRead(since)}`, `  ${action(since === null ? undefined : 'the cursors the last run ended with')}`);
    return { lines, refusal: typeof columns === 'string' ? undefined : columns };
  },
  // An empty view, or a sync feed with no change since the last run, is what the platform holds.
  emptyRun: () => Promise.resolve(undefined),
};

/**
 * The Parquet columns an instances stream would write, from its view as the platform has it now (a
 * resumed stream keeps the columns it began with); a view the platform does not have, or a 403
 * or 404 (refusedAccess), is the refusal a run would stop with.
 */
async function viewColumns(
  client: DryRunClient,
  plan: InstancesStreamPlan,
): Promise<string | ConfigError | AccessError | AuthError> {
  try {
    return (await readViewColumns(client, plan)).map((column) => column.name).join(', ');
  } catch (error) {
    if (error instanceof ConfigError) return error;
    const refusal = refusedAccess(error);
    if (refusal !== undefined) return refusal;
    throw error;
  }
}

/** What an incremental instances stream's run reads of the sync feed: its backfill, or changes since the last run. */
function feedRead(since: number | null): string {
  return since === null
    ? 'reads the sync feed from its start: every instance of the view, then the changes made meanwhile (the backfill)'
    : `reads the sync feed's changes since the run that started ${new Date(since).toISOString()}, deletes included`;
}

/** Query m's pages: its list, or (incremental) its sync feed until it has caught up; each checked against the query. */
function pagesOf(ctx: PartitionContext, plan: PartitionPlan<InstancesStreamPlan>): PageSource {
  const { stream, m } = plan;
  const feed = isSyncFeed(stream);
  return {
    feed,
    queryFix: `Change the view or the filter of stream ${stream.name} in the job file as the platform's message says (a property is [space, view/version, property])`,
    pages: ({ cursor, lastPage }) => {
      const checkItems = instancesCheck(stream, m);
      const common = { startCursor: cursor ?? undefined, signal: ctx.signal, budget: ctx.budget, checkItems };
      if (feed) return drainSyncFeed(ctx.client, { ...instancesSyncRequest(stream, m), ...common });
      const seenPage = cursor === null ? undefined : lastPage;
      return drainCursorChain(ctx.client, { ...instancesRequest(stream, m), ...common, seenPage });
    },
  };
}

/** An incremental instances stream reads the platform's sync feed, not a list. */
function isSyncFeed(stream: StreamPlan): boolean {
  return stream.mode === 'incremental';
}

/** JSON with every object's keys sorted: the same filter, however written, is the same parameter. */
function canonicalValue(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
