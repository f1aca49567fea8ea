import { isRecord, shown } from '../filter-object.js';
import {
  attempt,
  booleanAt,
  integerAt,
  invalid,
  objectAt,
  oneOfAt,
  type Parsed,
  sourcesAt,
  stringAt,
} from './body-parts.js';
import { type CompiledFilter, filterAt } from './filter-parse.js';
import type { SelectedSource } from './view-json.js';

export type SyncMode = 'onePhase' | 'twoPhase' | 'noBackfill';

/** One result set of a sync: a `with` entry, what its `select` returns, and the cursor it came with. */
export interface SyncSet {
  name: string;
  instanceType: 'node' | 'edge';
  filter: CompiledFilter | undefined;
  /** 1..2000, default 100 (the platform's sync limits). */
  limit: number;
  mode: SyncMode;
  skipAlreadyDeleted: boolean;
  sources: SelectedSource[];
  cursor: string | undefined;
  /** What its cursors are bound to: the instance type, the filter, the mode and skipAlreadyDeleted. */
  binding: string;
}

export interface SyncQuery {
  /** The selected result sets, in the order of `select`; a `with` entry not selected is not served. */
  sets: SyncSet[];
  includeTyping: boolean;
  allowExpiredCursors: boolean;
  /** The whole request, for the fault plan. */
  binding: string;
}

export const SYNC_MAX_LIMIT = 2000;
export const SYNC_DEFAULT_LIMIT = 100;

const TOP = ['with', 'select', 'cursors', 'includeTyping', 'allowExpiredCursorsAndAcceptMissedDeletes'];
const TOP_NOT_SERVED = ['parameters', 'debug'];
const WITH = ['nodes', 'edges', 'limit', 'mode', 'skipAlreadyDeleted'];
const CHAINING = ['from', 'through', 'chainTo', 'direction', 'nodeFilter', 'terminationFilter', 'maxDistance', 'limitEach'];
const emptyArrayOrObject = (_: string, value: unknown) =>
  (Array.isArray(value) && value.length === 0) || (isRecord(value) && Object.keys(value).length === 0);

/** A name-keyed object of 1..50 entries (`with`, `select`). */
function namedAt(given: unknown, path: string): Record<string, unknown> {
  if (!isRecord(given) || Object.keys(given).length === 0 || Object.keys(given).length > 50) {
    return invalid(path, `expected an object of 1 to 50 named result sets, got ${shown(given)}.`);
  }
  return given;
}

/**
 * The body of `POST /models/instances/sync`: `with` (each `{nodes: {filter}}` or `{edges: {filter}}`
 * with `limit`, `mode`, `skipAlreadyDeleted`), `select` (each `{sources: [{source, properties}]}`),
 * `cursors`, `includeTyping`, `allowExpiredCursorsAndAcceptMissedDeletes`. Chaining (`from`,
 * `through`, ...), `backfillSort`, `parameters` and a select's `sort` are the platform's and not
 * served: refused, naming them.
 */
export function parseSync(body: unknown): Parsed<SyncQuery> {
  return attempt(() => {
    const given = objectAt(body, '', TOP, TOP_NOT_SERVED, (key, value) => key === 'parameters' && emptyArrayOrObject(key, value));
    const withSets = namedAt(given.with, 'with');
    const select = namedAt(given.select, 'select');
    const cursors = given.cursors === undefined ? {} : objectAt(given.cursors, 'cursors', Object.keys(withSets));
    const sets = Object.entries(select).map(([name, selected]) => {
      if (!(name in withSets)) invalid(`select.${name}`, `no result set '${name}' in with.`);
      const chosen = objectAt(selected, `select.${name}`, ['sources'], ['sort', 'limit']);
      const cursor = cursors[name] === undefined ? undefined : stringAt(cursors[name], `cursors.${name}`);
      return { ...withSet(withSets[name], `with.${name}`, name), sources: sourcesAt(chosen.sources, `select.${name}.sources`, true), cursor };
    });
    return {
      sets,
      includeTyping: booleanAt(given.includeTyping, 'includeTyping', false),
      allowExpiredCursors: booleanAt(given.allowExpiredCursorsAndAcceptMissedDeletes, 'allowExpiredCursorsAndAcceptMissedDeletes', false),
      binding: JSON.stringify(['instances/sync', given]),
    };
  });
}

function withSet(given: unknown, path: string, name: string): Omit<SyncSet, 'sources' | 'cursor'> {
  const entry = objectAt(given, path, WITH, ['backfillSort'], (key, value) => key === 'backfillSort' && emptyArrayOrObject(key, value));
  if ((entry.nodes === undefined) === (entry.edges === undefined)) return invalid(path, 'expected exactly one of nodes and edges.');
  const instanceType = entry.nodes === undefined ? 'edge' : 'node';
  const expressionPath = `${path}.${instanceType}s`;
  const expression = objectAt(entry.nodes ?? entry.edges, expressionPath, ['filter'], CHAINING);
  const filter = expression.filter === undefined ? undefined : filterAt(expression.filter, instanceType, `${expressionPath}.filter`);
  const limit = integerAt(entry.limit, `${path}.limit`, 1, SYNC_MAX_LIMIT, SYNC_DEFAULT_LIMIT);
  const mode = oneOfAt(entry.mode, `${path}.mode`, ['onePhase', 'twoPhase', 'noBackfill'] as const, 'onePhase');
  const skipAlreadyDeleted = booleanAt(entry.skipAlreadyDeleted, `${path}.skipAlreadyDeleted`, true);
  const binding = JSON.stringify(['sync', instanceType, expression.filter ?? null, mode, skipAlreadyDeleted]);
  return { name, instanceType, filter, limit, mode, skipAlreadyDeleted, binding };
}
