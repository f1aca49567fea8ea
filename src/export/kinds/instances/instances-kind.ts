import { splitFilters, splitScopes } from '../../../config/instances-schema.js';
import type { InstancesStreamConfig } from '../../../config/job-schema.js';
import { drainCursorChain } from '../../../http/cursor-chain.js';
import { drainSyncFeed } from '../../../http/sync-chain.js';
import {
  countOrUnknown,
  drainPages,
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
      name: stream.name ?? stream.resource,
      resource: 'instances',
      params,
      partitions: queries.length,
      formats: [...new Set(stream.formats ?? defaultFormats)],
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
};

/** Query m's pages: its list, or (incremental) its sync feed until it has caught up; each checked against the query. */
function pagesOf(ctx: PartitionContext, plan: PartitionPlan<InstancesStreamPlan>): PageSource {
  const { stream, m } = plan;
  const feed = isSyncFeed(stream);
  return {
    feed,
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
