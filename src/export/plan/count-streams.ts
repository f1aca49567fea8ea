import { refusedAccess } from '../../http/access-refused.js';
import type { Logger } from '../../log.js';
import { streamKind } from '../kinds/index.js';
import type { CountClient } from '../partition/index.js';
import { type Checkpoint, isComplete, type StreamPlan } from '../state/index.js';

/** The platform's counts of what the streams' current runs read, by stream name. */
export interface StreamCounts {
  /** Items (rows) of a collection or instances stream. */
  items: Map<string, number>;
  /** The series a datapoints stream lists (not its points, which are not counted). */
  series: Map<string, number>;
}

/**
 * How many items each stream's current run will read, from the platform's count aggregate, asked
 * by each stream's kind: for progress and ETA, and for the read limits (it is approximate, and an
 * export never relies on it for completeness). A datapoints stream's series are counted, not its
 * points. Being the run's first contact with the platform, it also proves the credential and the
 * address before the output folder is touched: a refused credential, an unreachable platform, and
 * a 403 or 404 (a project that does not exist, a capability the credential lacks: refusedAccess)
 * are thrown; a count that fails otherwise only leaves that stream's total unknown. Streams
 * already complete are not counted. A collection the platform does not count (relationships) has
 * no total: a page of one item is asked for instead, to prove the credential all the same. An
 * instances stream's view is read first, for its columns (a view the platform does not have is
 * thrown), then its instances are counted. The total of a stream is also the base of its read
 * limit (read-limit.ts).
 */
export async function countStreams(
  client: CountClient,
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
        const { items, series } = await streamKind(stream.resource).count(client, stream, state, logger, signal);
        if (items !== undefined) counts.items.set(stream.name, items);
        if (series !== undefined) counts.series.set(stream.name, series);
      } catch (error) {
        // A 403 or 404 is not retried and does not pass: the project, the path or the access is wrong.
        throw refusedAccess(error) ?? error;
      }
    }),
  );
  return counts;
}
