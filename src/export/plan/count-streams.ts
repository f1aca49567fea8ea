import { refusedAccess } from '../../http/access-refused.js';
import { AuthError, HttpStatusError, type RequestError } from '../../http/errors.js';
import type { PlatformClient } from '../../http/platform-client.js';
import type { Logger } from '../../log.js';
import { resourceSpec } from '../../resources/index.js';
import { type Checkpoint, isComplete, type StreamPlan } from '../state/index.js';
import { aggregateFilter, countInstances, readViewColumns } from '../kinds/index.js';
import { chainParams } from './partitions.js';

/** The platform's counts of what the streams' current runs read, by stream name. */
export interface StreamCounts {
  /** Items (rows) of a collection stream. */
  items: Map<string, number>;
  /** The series a datapoints stream lists (not its points, which are not counted). */
  series: Map<string, number>;
}

/**
 * How many items each stream's current run will read, from the platform's count aggregate: for
 * progress and ETA, and for the read limits (it is approximate, and an export never relies on it
 * for completeness). A datapoints stream's series are counted, not its points. Being the run's
 * first contact with the platform, it also proves the credential and the address before the
 * output folder is touched: a refused credential, an unreachable platform, and a 403 or 404 (a
 * project that does not exist, a capability the credential lacks: refusedAccess) are thrown; any
 * other failure only leaves that stream's total unknown. Streams already complete are not counted. A
 * collection the platform does not count (relationships) has no total: a page of one item is
 * asked for instead, to prove the credential all the same. An instances stream's view is read
 * first, for its columns (a view the platform does not have is thrown), then its instances are
 * counted (countInstances); a count that fails leaves its total unknown, logged, as for a collection.
 * The total of a stream is also the base of its read limit (read-limit.ts).
 */
export async function countStreams(
  client: Pick<PlatformClient, 'aggregateCount' | 'get' | 'post'>,
  streams: readonly StreamPlan[],
  checkpoint: Checkpoint,
  logger: Logger,
  signal?: AbortSignal,
): Promise<StreamCounts> {
  const counts: StreamCounts = { items: new Map(), series: new Map() };
  await Promise.all(
    streams.map(async (stream) => {
      const state = checkpoint.streams[stream.name];
      if (state === undefined || isComplete(state)) return;
      try {
        if (stream.resource === 'instances') {
          // The view is read (which proves the credential) unless the stream began already: its
          // columns then come from the checkpoint, and its files keep their schema.
          const columns = state.instances?.columns ?? (await readViewColumns(client, stream, signal));
          state.instances = { columns };
          stream.instances!.columns = columns;
          const total = await countOrUnknown(() => countInstances(client, stream, signal), stream, logger);
          if (total !== undefined) counts.items.set(stream.name, total);
          return;
        }
        if (stream.resource === 'datapoints') {
          // The points are not counted; the series are, for the log and the read limit.
          const series = await countSeries(client, stream, state, logger, signal);
          if (series !== undefined) counts.series.set(stream.name, series);
          return;
        }
        const total = await countStream(client, stream, state, logger, signal);
        if (total !== undefined) counts.items.set(stream.name, total);
      } catch (error) {
        // A 403 or 404 is not retried and does not pass: the project, the path or the access is wrong.
        const refusal = refusedAccess(error);
        if (refusal !== undefined) throw refusal;
        if (error instanceof AuthError || stream.resource === 'instances') throw error;
        if (!(error instanceof HttpStatusError || isContentError(error))) throw error;
        logger.debug({ stream: stream.name, code: error.code }, `no item count for ${stream.name} (progress shows no total): ${error.message}`);
      }
    }),
  );
  return counts;
}

/**
 * An instances stream's count, or undefined when the platform gives none (an error status, an
 * answer that is not a count), logged: the stream then has no total and no read limit. A refused
 * credential is thrown.
 */
async function countOrUnknown(
  count: () => Promise<number>,
  stream: StreamPlan,
  logger: Logger,
): Promise<number | undefined> {
  try {
    return await count();
  } catch (error) {
    if (error instanceof AuthError || !(error instanceof HttpStatusError || isContentError(error))) throw error;
    logger.info(
      { stream: stream.name, code: error.code },
      `no instance count for ${stream.name} (progress shows no total, and no read limit applies): ${error.message}`,
    );
    return undefined;
  }
}

/** A stream's item count; undefined for a collection the platform does not count (a page proves the credential). */
async function countStream(
  client: Pick<PlatformClient, 'aggregateCount' | 'get'>,
  stream: StreamPlan,
  state: Checkpoint['streams'][string],
  logger: Logger,
  signal: AbortSignal | undefined,
): Promise<number | undefined> {
  const { resource } = stream;
  if (resource === 'instances' || resource === 'datapoints') return undefined;
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

/**
 * A datapoints stream's series: counted when listed; else (explicit series) one page of the
 * collection proves the credential, and there is no count.
 */
async function countSeries(
  client: Pick<PlatformClient, 'aggregateCount' | 'get'>,
  stream: StreamPlan,
  state: Checkpoint['streams'][string],
  logger: Logger,
  signal: AbortSignal | undefined,
): Promise<number | undefined> {
  const params = chainParams(stream, state);
  if (params.length === 0) {
    await client.get('/timeseries', [['limit', '1']], signal);
    return undefined;
  }
  const series = await client.aggregateCount('timeseries', aggregateFilter('timeseries', params), signal);
  logger.info({ stream: stream.name, series }, `${stream.name}: ${series} time series selected`);
  return series;
}

/** An answer that arrived but was not a count: the platform is there, the count is just unknown. */
function isContentError(error: unknown): error is RequestError {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'E_BAD_RESPONSE' || code === 'E_INVALID_JSON';
}
