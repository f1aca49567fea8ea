import { MAX_LIMIT } from '../query.js';
import { attempt, booleanAt, integerAt, objectAt, oneOfAt, type Parsed, sourcesAt, stringAt } from './body-parts.js';
import { type CompiledFilter, filterAt } from './filter-parse.js';
import type { SelectedSource } from './view-json.js';

/** A validated `POST /models/instances/list` body. `binding` names every property but `cursor`. */
export interface InstancesListQuery {
  instanceType: 'node' | 'edge';
  /** The views whose properties to return; an instance must have data in all of them to be listed. */
  sources: SelectedSource[];
  filter: CompiledFilter | undefined;
  limit: number;
  cursor: string | undefined;
  includeTyping: boolean;
  binding: string;
}

const ALLOWED = ['instanceType', 'sources', 'filter', 'limit', 'cursor', 'includeTyping'];
const NOT_SERVED = ['sort', 'debug'];

/**
 * The body of `POST /models/instances/list`: `instanceType` (`node`, the default, or `edge`),
 * `sources`, `filter`, `limit` (1..1000, default 1000), `cursor`, `includeTyping`. A non-empty
 * `sort` is refused (the simulator lists in its own stable order); `sort: []` is taken.
 */
export function parseInstancesList(body: unknown): Parsed<InstancesListQuery> {
  return attempt(() => {
    const given = objectAt(body, '', ALLOWED, NOT_SERVED, (key, value) => key === 'sort' && Array.isArray(value) && value.length === 0);
    const instanceType = oneOfAt(given.instanceType, 'instanceType', ['node', 'edge'] as const, 'node');
    const sources = sourcesAt(given.sources, 'sources', false);
    const filter = given.filter === undefined ? undefined : filterAt(given.filter, instanceType);
    const limit = integerAt(given.limit, 'limit', 1, MAX_LIMIT, MAX_LIMIT);
    const cursor = given.cursor === undefined ? undefined : stringAt(given.cursor, 'cursor');
    const includeTyping = booleanAt(given.includeTyping, 'includeTyping', false);
    const binding = JSON.stringify([
      'instances/list',
      instanceType,
      sources.map(({ view }) => [view.space, view.externalId, view.version]),
      given.filter ?? null,
      limit,
      includeTyping,
    ]);
    return { instanceType, sources, filter, limit, cursor, includeTyping, binding };
  });
}
