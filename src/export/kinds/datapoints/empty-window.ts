import type { ChainClient } from '../../../http/cursor-chain.js';
import { type LatestPoint, latestPoints } from '../../../http/latest-points.js';
import type { PlatformClient } from '../../../http/platform-client.js';
import { errorFields, type Logger } from '../../../log.js';
import { MAX_POINT_TIME } from '../../../resources/index.js';
import { type DatapointsStreamPlan, pointWindowOf, type StreamState } from '../../state/index.js';
import { sampleSeries } from './series-sample.js';

/** What the note of an empty window asks with: a page of the series' listing, and their newest points. */
export type EmptyWindowClient = ChainClient & Pick<PlatformClient, 'post'>;

/** Where a sample of the series' newest point lies; undefined: the platform was not asked, or failed. */
interface Newest {
  /** The series asked (a sample of at most 100 of them). */
  asked: number;
  /** The newest point among them, and its series; undefined: none of them holds a point. */
  point: LatestPoint | undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Why a datapoints run that read to its end wrote nothing: its series hold no point (or bucket)
 * in its window, which is named, with where their points are: the newest point of a sample of
 * them (SAMPLE_SERIES, from `POST /timeseries/data/latest`), before the window or after it, so
 * that a window set in the wrong place is seen at once and moved the right way; or no series was
 * selected. A failure of those extra requests never fails the run: the note then says less.
 */
export async function emptyWindow(
  client: EmptyWindowClient,
  stream: DatapointsStreamPlan,
  state: StreamState,
  listing: readonly (readonly [string, string])[],
  logger: Logger,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const window = pointWindowOf(state);
  if (window === undefined) return undefined;
  if (window.end <= window.start) {
    return `the window [${iso(window.start)}, ${iso(window.end)}) holds no time: start is not before end (end: the run's start when left out)`;
  }
  const parts = Object.values(state.parts);
  const { ids, externalIds, instanceIds, aggregates } = stream.points;
  const explicit = ids?.length ?? externalIds?.length ?? instanceIds?.length;
  const unknown = parts.reduce((sum, part) => sum + (part.points?.unknown.length ?? 0), 0);
  const listed = parts.reduce((sum, part) => sum + (part.points?.listedSeries ?? 0), 0);
  const series = explicit === undefined ? listed : explicit - unknown;
  if (series === 0) {
    return explicit === undefined
      ? 'no time series matches the stream\'s timeseries selection, so no point was read'
      : 'the platform knows none of the series listed in timeseries, so no point was read';
  }
  const rows = aggregates === undefined ? 'points' : `${aggregates.join(', ')} buckets of ${stream.points.granularity ?? '?'}`;
  const head = `${series.toLocaleString('en-US')} series, 0 ${rows} in [${iso(window.start)}, ${iso(window.end)}): `;
  const newest = await newestPoint(client, stream, listing, signal).catch((error: unknown) => {
    logger.debug({ stream: stream.name, ...errorFields(error, logger) }, `${stream.name}: the newest point of its series could not be asked for`);
    return undefined;
  });
  const check = 'check start and end (end: the run\'s start when left out)';
  if (newest === undefined || newest.asked === 0) return `${head}none of these series has a point in this window; ${check}`;
  const these = newest.asked >= series ? 'these series' : `${newest.asked.toLocaleString('en-US')} of these series`;
  const { point } = newest;
  if (point?.timestamp === undefined) return `${head}${these} hold no point at all`;
  const at = point.timestamp;
  const where = at < window.start
    ? `before the window: start is ${iso(window.start)}`
    : at >= window.end
      ? `after the window: end is ${iso(window.end)}${stream.points.end === undefined ? ' (the run\'s start: end left out)' : ''}`
      : 'in the window: written after this run read it';
  return `${head}the newest point of ${these} is ${iso(at)} (series ${seriesName(point)}), ${where}`;
}

/** The newest point of a sample of the stream's series, of all time (the platform's, up to 2100). */
async function newestPoint(
  client: EmptyWindowClient,
  stream: DatapointsStreamPlan,
  listing: readonly (readonly [string, string])[],
  signal: AbortSignal | undefined,
): Promise<Newest> {
  const sample = await sampleSeries(client, stream, listing, signal);
  if (sample.length === 0) return { asked: 0, point: undefined };
  const { ignoreBadDataPoints, treatUncertainAsBad } = stream.points.options;
  const flags = { ignoreBadDataPoints, treatUncertainAsBad };
  const answered = await latestPoints(client, { series: sample, before: MAX_POINT_TIME, flags }, signal);
  let point: LatestPoint | undefined;
  for (const one of answered) {
    if (one.timestamp !== undefined && (point?.timestamp === undefined || one.timestamp > point.timestamp)) point = one;
  }
  return { asked: answered.length, point };
}

/** A series as a person names it: its externalId, else its node's `space:externalId`, else its id. */
function seriesName(point: LatestPoint): string {
  if (point.externalId !== undefined) return point.externalId;
  if (point.instanceId !== undefined) return `${point.instanceId.space}:${point.instanceId.externalId}`;
  return String(point.id);
}
