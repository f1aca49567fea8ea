import { shown } from '../filter-object.js';
import { attempt, invalid, objectAt, oneOfAt, type Parsed, viewAt } from './body-parts.js';
import type { ViewDefinition } from './core-model.js';
import { type CompiledFilter, filterAt } from './filter-parse.js';

/** A validated `POST /models/instances/aggregate` body: counts of the instances of a view. */
export interface InstancesAggregateQuery {
  view: ViewDefinition;
  instanceType: 'node' | 'edge';
  filter: CompiledFilter | undefined;
  /** The property each requested count names, in order (`externalId`: every instance). */
  counts: string[];
}

const ALLOWED = ['view', 'instanceType', 'filter', 'aggregates', 'limit'];
const NOT_SERVED = ['query', 'properties', 'groupBy', 'targetUnits'];
/** The aggregates the platform has besides `count`. */
const OTHER_AGGREGATES = ['avg', 'min', 'max', 'sum', 'histogram'];
/** The platform takes at most this many aggregates in one request. */
const MAX_AGGREGATES = 5;

/**
 * The body of `POST /models/instances/aggregate`: `view` (required), `instanceType` (`node`, the
 * default, or `edge`), `filter`, `aggregates` (1 to 5, each `{count: {property}}`), `limit`. The
 * simulator counts by `externalId` only (every instance has one, so it counts the instances);
 * `groupBy`, `query`, the other aggregates and counts of other properties are the platform's and
 * refused as not served.
 */
export function parseInstancesAggregate(body: unknown): Parsed<InstancesAggregateQuery> {
  return attempt(() => {
    const given = objectAt(body, '', ALLOWED, NOT_SERVED);
    if (given.view === undefined) invalid('view', 'required.');
    const view = viewAt(given.view, 'view');
    const instanceType = oneOfAt(given.instanceType, 'instanceType', ['node', 'edge'] as const, 'node');
    const filter = given.filter === undefined ? undefined : filterAt(given.filter, instanceType);
    const { aggregates } = given;
    if (!Array.isArray(aggregates) || aggregates.length === 0 || aggregates.length > MAX_AGGREGATES) {
      return invalid('aggregates', `expected an array of 1 to ${MAX_AGGREGATES} aggregates, got ${shown(aggregates)}.`);
    }
    const counts = aggregates.map((entry, i) => {
      const path = `aggregates[${i}]`;
      const aggregate = objectAt(entry, path, ['count'], OTHER_AGGREGATES);
      const count = objectAt(aggregate.count, `${path}.count`, ['property']);
      if (count.property !== 'externalId') {
        return invalid(`${path}.count.property`, `the simulator counts by externalId only, got ${shown(count.property)}.`);
      }
      return count.property;
    });
    return { view, instanceType, filter, counts };
  });
}
