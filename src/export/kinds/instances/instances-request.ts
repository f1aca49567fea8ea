import type { QueryScope } from '../../../config/instances-schema.js';
import { ConfigError } from '../../../errors.js';
import { parseInstancesCount } from '../../../http/aggregate-count.js';
import type { PlatformClient } from '../../../http/platform-client.js';
import type { PageItems } from '../../../page/index.js';
import { compareCodePoints } from '../../../util/code-point-order.js';
import { instanceColumns, type InstanceColumn, type ViewDefinition } from '../../../resources/index.js';
import type { StreamPlan } from '../../state/index.js';
import type { ListRequest } from '../../partition/index.js';

/**
 * Query `m` (1-based) of an instances stream: `POST /models/instances/list` for the stream's view
 * (its properties returned, and only instances with data in it), its instance type and the
 * query's filter. The chain repeats it with only the cursor added.
 */
export function instancesRequest(stream: StreamPlan, m: number): ListRequest {
  const { instances } = stream;
  if (instances === undefined) throw new Error(`${stream.name} is not an instances stream`);
  const limit = Number(stream.params.find(([key]) => key === 'limit')?.[1] ?? 1000);
  const filter = instances.queries[m - 1];
  return {
    method: 'POST',
    path: '/models/instances/list',
    body: {
      instanceType: instances.instanceType,
      sources: [{ source: { type: 'view', ...instances.view } }],
      ...(filter === undefined ? {} : { filter }),
      limit,
    },
  };
}

/**
 * The check of every page query `m` (1-based) of an instances stream reads, list or sync
 * (ChainCommon.checkItems): each instance must lie in the query's scope (splitScopes), its space
 * among the query's, its externalId in the query's range, compared in code-point order as the
 * platform orders externalIds. One outside was sent although the query's filter leaves it out (a
 * platform that ignores the split): written, it would be exported twice, or where it does not
 * belong, so the page is refused, naming the instance and the query. Read from the offsets the
 * page's scan noted (PageItems.key): no instance is parsed for it. Undefined for a query that
 * names neither spaces nor a range.
 */
export function instancesCheck(stream: StreamPlan, m: number): ((items: PageItems) => string | undefined) | undefined {
  const scope = stream.instances?.scopes[m - 1];
  if (scope === undefined || (scope.spaces === undefined && scope.externalId === undefined)) return undefined;
  const spaces = scope.spaces === undefined ? undefined : new Set(scope.spaces);
  const { gte, lt } = scope.externalId ?? {};
  const inRange = (id: string) =>
    (gte === undefined || compareCodePoints(id, gte) >= 0) && (lt === undefined || compareCodePoints(id, lt) < 0);
  return (items) => {
    for (let i = 0; i < items.length; i++) {
      const { space, externalId } = items.key(i);
      const inSpaces = spaces === undefined || (space !== undefined && spaces.has(space));
      const inQuery = inSpaces && (scope.externalId === undefined || (externalId !== undefined && inRange(externalId)));
      if (inQuery) continue;
      const instance = `${space === undefined ? '(no space)' : JSON.stringify(space)}:${externalId === undefined ? '(no externalId)' : JSON.stringify(externalId.slice(0, 256))}`;
      return (
        `Instance ${i + 1} of the page, ${instance}, is not one that query ${m}/${stream.partitions} of ${stream.name} ` +
        `asks for (${scopeText(scope)}): the platform did not apply the query's filter, and writing the instance would ` +
        'export it twice or where it does not belong; refusing the page'
      );
    }
    return undefined;
  };
}

/** A query's scope as its check names it: `space in [a, b] and externalId >= "g" and < "p"`. */
function scopeText(scope: QueryScope): string {
  const parts: string[] = [];
  if (scope.spaces !== undefined) {
    parts.push(scope.spaces.length === 1 ? `space ${JSON.stringify(scope.spaces[0])}` : `space in ${JSON.stringify(scope.spaces)}`);
  }
  const { gte, lt } = scope.externalId ?? {};
  const bounds = [...(gte === undefined ? [] : [`>= ${JSON.stringify(gte)}`]), ...(lt === undefined ? [] : [`< ${JSON.stringify(lt)}`])];
  if (bounds.length > 0) parts.push(`externalId ${bounds.join(' and ')}`);
  return parts.join(' and ');
}

/** The name of the one result set of an instances stream's sync requests. */
export const SYNC_SET = 'instances';

/** A sync feed's request without its cursor: what drainSyncFeed repeats. */
export interface InstancesSyncRequest {
  path: string;
  body: Record<string, unknown>;
  set: string;
  limit: number;
}

/**
 * Query `m` (1-based) of an incremental instances stream as one result set of
 * `POST /models/instances/sync`: the instances of the stream's type with data in its view (a sync
 * selects no instances by its sources, so `hasData` says it) that match the query's filter, and
 * the view's properties of each. `allowExpiredCursorsAndAcceptMissedDeletes` is sent only when the
 * stream sets it.
 */
export function instancesSyncRequest(stream: StreamPlan, m: number): InstancesSyncRequest {
  const { instances } = stream;
  if (instances === undefined) throw new Error(`${stream.name} is not an instances stream`);
  const limit = Number(stream.params.find(([key]) => key === 'limit')?.[1] ?? 1000);
  const view = { type: 'view', ...instances.view };
  const query = instances.queries[m - 1];
  const hasData = { hasData: [view] };
  const filter = query === undefined ? hasData : { and: [hasData, query] };
  const expression = instances.instanceType === 'edge' ? { edges: { filter } } : { nodes: { filter } };
  return {
    path: '/models/instances/sync',
    body: {
      with: { [SYNC_SET]: { ...expression, limit } },
      select: { [SYNC_SET]: { sources: [{ source: view, properties: ['*'] }] } },
      ...(instances.allowExpiredCursors === true ? { allowExpiredCursorsAndAcceptMissedDeletes: true } : {}),
    },
    set: SYNC_SET,
    limit,
  };
}

/** Where the platform counts instances. */
export const INSTANCES_AGGREGATE_PATH = '/models/instances/aggregate';

/**
 * How many instances an instances stream holds, all its queries together: the platform's count
 * aggregate (`POST /models/instances/aggregate`) of the instances of its type with data in its
 * view that match its filter and spaces, by `externalId`, which every instance has. Approximate,
 * as the collections' counts: for progress and the read limit, never for completeness.
 */
export async function countInstances(client: Pick<PlatformClient, 'post'>, stream: StreamPlan, signal?: AbortSignal): Promise<number> {
  const { instances } = stream;
  if (instances === undefined) throw new Error(`${stream.name} is not an instances stream`);
  const body = {
    view: { type: 'view', ...instances.view },
    instanceType: instances.instanceType,
    ...(instances.filter === undefined ? {} : { filter: instances.filter }),
    aggregates: [{ count: { property: 'externalId' } }],
  };
  return parseInstancesCount(await client.post(INSTANCES_AGGREGATE_PATH, body, signal));
}

/**
 * The columns of an instances stream, from its view's definition (`POST /models/views/byids`, with
 * the properties it inherits). The platform leaves a view it does not know out of its answer:
 * that is a ConfigError naming the view as the job file gives it.
 */
export async function readViewColumns(
  client: Pick<PlatformClient, 'post'>,
  stream: StreamPlan,
  signal?: AbortSignal,
): Promise<InstanceColumn[]> {
  const { instances } = stream;
  if (instances === undefined) throw new Error(`${stream.name} is not an instances stream`);
  const { view } = instances;
  const answer = await client.post('/models/views/byids', { items: [view], includeInheritedProperties: true }, signal);
  const items = (answer.body as { items?: unknown } | null)?.items;
  const found = Array.isArray(items)
    ? (items as ViewDefinition[]).find(
        (item) => item?.space === view.space && item.externalId === view.externalId && item.version === view.version,
      )
    : undefined;
  if (found === undefined) {
    throw new ConfigError(
      `streams (${stream.name}).view: the platform has no view ${view.space}:${view.externalId} version ${view.version}; ` +
      'check space, externalId and version (GET /models/views lists the views of a space)',
    );
  }
  return [...instanceColumns(found, instances.instanceType).columns];
}
