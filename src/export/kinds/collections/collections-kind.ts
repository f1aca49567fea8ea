import type { CollectionStreamConfig, FilterValue } from '../../../config/job-schema.js';
import { refusedAccess } from '../../../http/access-refused.js';
import { drainCursorChain } from '../../../http/cursor-chain.js';
import { HttpStatusError } from '../../../http/errors.js';
import type { Logger } from '../../../log.js';
import { filterKeys, type Resource, resourceSpec } from '../../../resources/index.js';
import { countOrUnknown, drainPages, namedFormats, type StreamKind } from '../../partition/index.js';
import { type CollectionStreamPlan, sentBounds, type StreamState } from '../../state/index.js';
import { aggregateFilter, chainRequest } from './chain-request.js';

/**
 * The six collections (assets, events, files, timeseries, sequences, relationships): each
 * partition one cursor chain of `GET /{collection}` (or `POST /{collection}/list`), its window the
 * items' lastUpdatedTime.
 */
export const collections: StreamKind<CollectionStreamConfig, CollectionStreamPlan> = {
  plan: (stream, defaultFormats) => ({
    ...namedFormats(stream, defaultFormats),
    resource: stream.resource,
    params: listParams(stream.resource, stream.limit, stream.filter),
    partitions: stream.partitions,
    mode: stream.mode,
    safetyLagMs: stream.safetyLag,
    keep: stream.keep,
    metadataColumns: stream.metadataColumns,
    updatedBetween: { min: stream.filter.minLastUpdatedTime, max: stream.filter.maxLastUpdatedTime },
  }),
  chainParams,
  partitionParam: 'partition',
  count: async (client, stream, state, logger, signal) => {
    const resource = stream.resource;
    const items = await countOrUnknown(
      () => countItems(client, stream, resource, state, logger, signal),
      (error) => {
        // A 403 or 404 is not retried and does not pass: the project, the path or the access is wrong.
        if (refusedAccess(error) !== undefined) throw error;
        logger.debug({ stream: stream.name, code: error.code }, `no item count for ${stream.name} (progress shows no total): ${error.message}`);
      },
    );
    return items === undefined ? {} : { items };
  },
  start: () => ({
    drain: (ctx, plan, log) =>
      drainPages(ctx, plan, log, {
        feed: false,
        queryFix: `Change the filter of stream ${plan.stream.name} in the job file as the platform's message says`,
        pages: ({ cursor, lastPage }) =>
          drainCursorChain(ctx.client, {
            ...chainRequest(plan.stream.resource, plan.params),
            startCursor: cursor ?? undefined,
            signal: ctx.signal,
            budget: ctx.budget,
            seenPage: cursor === null ? undefined : lastPage,
          }),
      }),
  }),
  cursorRefused: () => undefined,
  listedCollection: (stream) => stream.resource,
  firstRequest: (stream, state) => chainRequest(stream.resource, chainParams(stream, state)),
  dryRun: (_client, { plan, listed, written, metadataColumns, action }) => {
    const lines = [`stream ${plan.name}: ${listed} in ${plan.partitions} partition(s) -> ${written}`];
    if (metadataColumns !== undefined) lines.push(`  ${describeMetadataColumns(metadataColumns, plan.formats)}`);
    lines.push(`  ${action()}`);
    return Promise.resolve({ lines });
  },
  // An empty window of a collection is what it held: nothing changed since the last run.
  emptyRun: () => Promise.resolve(undefined),
};

/** The Parquet columns a stream's metadataColumns keys become (`metadata_<key>`), each with its key. */
function describeMetadataColumns(
  columns: readonly { key: string; column: string }[],
  formats: readonly string[],
): string {
  const named = columns.map(({ key, column }) => `${column} (${JSON.stringify(key)})`).join(', ');
  return formats.includes('parquet')
    ? `metadata columns: ${named}`
    : `metadata columns: none written (they are Parquet columns; this stream writes ${formats.join(' + ')})`;
}

/**
 * The parameters a stream's chains send in its current run: the config's, with the
 * lastUpdatedTime bounds of the run's window in place of the config's own.
 * A checkpoint of version 1 has no window: its chains go on with the config's parameters.
 */
function chainParams(stream: CollectionStreamPlan, state: Pick<StreamState, 'window'>): [string, string][] {
  if (state.window === null) return [...stream.params];
  const bounds = sentBounds(state.window);
  const values = new Map<string, string | number | null>([...stream.params, ...Object.entries(bounds)]);
  const params: [string, string][] = [['limit', String(values.get('limit'))]];
  for (const key of filterKeys(stream.resource)) {
    const value = values.get(key);
    if (value !== undefined && value !== null) params.push([key, String(value)]);
  }
  return params;
}

/** A stream's item count; undefined for a collection the platform does not count (a page proves the credential). */
async function countItems(
  client: Parameters<StreamKind['count']>[0],
  stream: CollectionStreamPlan,
  resource: Resource,
  state: StreamState,
  logger: Logger,
  signal: AbortSignal | undefined,
): Promise<number | undefined> {
  if (!resourceSpec(resource).countable) {
    // No count aggregate (relationships): a one-item page proves the credential; no total.
    await client.get(`/${resource}`, [['limit', '1']], signal);
    return undefined;
  }
  try {
    return await client.aggregateCount(resource, aggregateFilter(resource, chainParams(stream, state)), signal);
  } catch (error) {
    // A 404 on the count alone (a gateway that passes the lists only) is no total; if the list
    // has nothing there either, its 404 refuses the run.
    if (!(error instanceof HttpStatusError) || error.status !== 404) throw error;
    await client.get(`/${resource}`, [['limit', '1']], signal);
    logger.debug({ stream: stream.name }, `no item count for ${stream.name} (progress shows no total): ${error.message}`);
    return undefined;
  }
}

/** A collection's chain parameters: `limit`, then each filter set, in the collection's order. */
export function listParams(
  resource: Resource,
  limit: number,
  filter: Readonly<Record<string, FilterValue | undefined>>,
): [string, string][] {
  const params: [string, string][] = [['limit', String(limit)]];
  for (const key of filterKeys(resource)) {
    const value = filter[key];
    if (value !== undefined) params.push([key, paramText(value)]);
  }
  return params;
}

/**
 * A filter's value as a chain's parameter: numbers and booleans as text, lists as JSON arrays (the
 * form GET takes), a map or a label filter as JSON with its keys sorted (the same pairs give the
 * same parameter).
 */
function paramText(value: FilterValue): string {
  if (Array.isArray(value)) return JSON.stringify(value);
  return typeof value === 'object' ? canonicalJson(value) : String(value);
}

function canonicalJson(map: object): string {
  return JSON.stringify(Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}
