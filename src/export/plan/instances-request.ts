import { ConfigError } from '../../errors.js';
import type { PlatformClient } from '../../http/platform-client.js';
import { instanceColumns, type InstanceColumn, type ViewDefinition } from '../../resources/index.js';
import type { StreamPlan } from '../state/index.js';
import type { ListRequest } from './chain-request.js';

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
