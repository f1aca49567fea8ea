import { HttpStatusError, type RequestContext, RequestError } from '../../../http/errors.js';
import type { AskedQuery, SeriesRef } from './points-answer.js';
import type { PlatformClient } from '../../../http/platform-client.js';

/**
 * The platform left a series out of an answer (asked with `ignoreUnknownIds: true`), and did not
 * confirm that it does not know it when asked for it by itself: writing on would lose its points.
 */
export class SeriesMissingError extends RequestError {
  readonly code = 'E_SERIES_MISSING';
  readonly retryable = false;
}

/**
 * Confirms that the platform does not know the series of `queries`, which its answer (`answered`)
 * left out: with `ignoreUnknownIds: true` a series it does not know (deleted since it was listed,
 * or never there) leaves no item, and so does a series a broken server drops. They are asked for
 * again, all in one request of one point each, with `ignoreUnknownIds: false`: only the platform's
 * 400 whose `missing` names a series confirms it unknown. Any other answer fails with
 * SeriesMissingError naming the series (a request that fails is thrown as it is).
 */
export async function confirmUnknown(
  client: Pick<Pick<PlatformClient, 'postRead'>, 'postRead'>,
  path: string,
  queries: readonly AskedQuery[],
  answered: RequestContext,
  signal: AbortSignal,
): Promise<void> {
  const body = {
    items: queries.map((query) => ({ ...query.ref, start: query.start, end: query.end, limit: 1 })),
    ignoreUnknownIds: false,
  };
  let confirmation: RequestContext;
  try {
    // Whatever a 2xx holds, it is not the 400 that confirms: its body is not read.
    const response = await client.postRead(path, body, () => true, signal);
    confirmation = { method: 'POST', path: response.path, ...(response.requestId === undefined ? {} : { requestId: response.requestId }) };
  } catch (error) {
    if (!(error instanceof HttpStatusError) || error.status !== 400) throw error;
    const named = error.missing ?? [];
    const left = queries.find((query) => !named.some((entry) => names(entry, query.ref)));
    if (left === undefined) return;
    const said = error.missing === undefined ? 'without naming any series missing' : `naming ${named.length} missing, not this one`;
    throw missingError(left.ref, answered, `it answered HTTP 400 ${said} (request id ${error.requestId ?? 'none'})`, error);
  }
  throw missingError(queries[0]!.ref, answered, `it answered (request id ${confirmation.requestId ?? 'none'}) instead of naming it missing`);
}

/** Whether an entry of the platform's `missing` names the series `ref`. */
function names(entry: unknown, ref: SeriesRef): boolean {
  type Named = { id?: unknown; externalId?: unknown; instanceId?: { space?: unknown; externalId?: unknown } };
  const given = entry as Named | null;
  if ('id' in ref) return given?.id === ref.id;
  if ('externalId' in ref) return given?.externalId === ref.externalId;
  return given?.instanceId?.space === ref.instanceId.space && given.instanceId.externalId === ref.instanceId.externalId;
}

function missingError(ref: SeriesRef, answered: RequestContext, what: string, cause?: unknown): SeriesMissingError {
  const series = `series ${seriesName(ref)}`;
  return new SeriesMissingError(
    `The platform left ${series} out of its answer, and asked for it by itself with ignoreUnknownIds: false, ${what}: ` +
    'a platform that leaves out a series it knows would have its points lost, so the partition stops (what it committed ' +
    'stays; run again to resume, and report the platform\'s answers if it recurs)',
    answered,
    { cause },
  );
}

/** A series as a message names it: its id, its externalId quoted, or its instanceId `space:externalId`. */
export function seriesName(ref: SeriesRef): string {
  if ('id' in ref) return String(ref.id);
  if ('externalId' in ref) return JSON.stringify(ref.externalId);
  return `${ref.instanceId.space}:${ref.instanceId.externalId}`;
}
