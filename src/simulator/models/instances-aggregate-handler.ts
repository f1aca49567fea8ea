import { type Countable, countMatching } from '../count.js';
import { type Exchange, readResourceBody, sendError, sendJson } from '../respond.js';
import type { RequestNotes } from '../stats.js';
import { parseInstancesAggregate } from './aggregate-request.js';
import { matches } from './filter-match.js';
import type { CompiledFilter } from './filter-parse.js';
import { kindsListed } from './instances-list-handler.js';
import { viewProperties } from './model-lookup.js';
import type { ModelsContext } from './models-context.js';

/** What countMatching is given: always an object with a key, so that it never takes the count for unfiltered. */
interface Counted {
  filter: CompiledFilter | undefined;
}

/**
 * `POST {base}/models/instances/aggregate` with count aggregates: how many live (not deleted)
 * instances of the type have data in the view and match the filter, answered as the platform
 * does, `{"items":[{"instanceType":"node","aggregates":[{"aggregate":"count","property":"externalId","value":N}]}]}`,
 * one entry per count asked for. Approximate past COUNT_SAMPLE_SIZE instances, as the collections'
 * count (countMatching). Changes due by the clock are applied first; no fault, latency or cap
 * applies, as on the collections' aggregate.
 */
export async function handleInstancesAggregate(ctx: ModelsContext, ex: Exchange, notes: RequestNotes): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseInstancesAggregate(body.value);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const { view, instanceType, filter, counts } = parsed.value;
  ctx.churn.catchUp(ctx.clock.now());
  const store = ctx.instances;
  const kinds = kindsListed(store, instanceType, [{ view, properties: viewProperties(view) }], filter);
  // The kinds' instances one after the other, by a running index.
  const starts = kinds.map((_, k) => kinds.slice(0, k).reduce((sum, kind) => sum + store.count(kind), 0));
  const set: Countable<Counted> = {
    count: kinds.reduce((sum, kind) => sum + store.count(kind), 0),
    matches: (index, wanted) => {
      let k = kinds.length - 1;
      while (starts[k]! > index) k--;
      const kind = kinds[k]!;
      const at = index - starts[k]!;
      if (store.isDeleted(kind, at)) return false;
      return wanted.filter === undefined || matches(store.instance(kind, at), wanted.filter);
    },
  };
  const value = countMatching(set, { filter });
  const aggregates = counts.map((property) => ({ aggregate: 'count', property, value }));
  return sendJson(ex, 200, { items: [{ instanceType, aggregates }] });
}
