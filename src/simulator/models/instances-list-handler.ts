import { capReached } from '../fault-response.js';
import { type Exchange, readResourceBody, sendError } from '../respond.js';
import { increment, type RequestNotes } from '../stats.js';
import { matches, possibleKinds } from './filter-match.js';
import type { CompiledFilter } from './filter-parse.js';
import { containerKeysOf, instanceJson } from './instance-json.js';
import { scan } from './instance-scan.js';
import type { InstanceStore } from './instance-store.js';
import { parseInstancesList } from './list-request.js';
import { type ModelsContext, serveFaulted } from './models-context.js';
import { type InstanceKind, NODE_KINDS } from './node-links.js';
import { type SelectedSource, typingJson } from './view-json.js';

/**
 * `POST {base}/models/instances/list`: a page of the nodes (or edges) that have data in every
 * source view and match the filter, in the simulator's stable order, with `nextCursor` while more
 * may follow. Soft-deleted instances are left out. Caps, faults and latency as on the lists.
 */
export async function handleInstancesList(ctx: ModelsContext, ex: Exchange, notes: RequestNotes): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseInstancesList(body.value);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const query = parsed.value;
  const capped = capReached(ctx.config.faults, ctx.rateGate, ctx.stats);
  if (capped !== undefined) return sendError(ex, 429, capped);
  ctx.churn.catchUp(ctx.clock.now());

  let position = 0;
  if (query.cursor !== undefined) {
    const decoded = ctx.cursors.decode(query.cursor, query.binding, ctx.clock.now(), ctx.config.faults.cursorTtlMs);
    if (!decoded.ok) {
      if (decoded.reason === 'expired') increment(ctx.stats.faults, 'cursor-expired');
      return sendError(ex, 400, decoded.message);
    }
    position = decoded.state.position;
  }
  const store = ctx.instances;
  const kinds = kindsListed(store, query.instanceType, query.sources, query.filter);
  return serveFaulted(ctx, ex, { binding: query.binding, position, limit: query.limit }, (limit) => {
    const { instances, next } = scan(store, kinds, position, limit, ctx.config.scanBudget, (kind, index) => {
      if (store.isDeleted(kind, index)) return undefined;
      const instance = store.instance(kind, index);
      return query.filter === undefined || matches(instance, query.filter) ? instance : undefined;
    });
    const state = { position: next ?? 0, issuedAtMs: ctx.clock.now() };
    const nextCursor = next === undefined ? undefined : ctx.cursors.encode(query.binding, state);
    return {
      body: {
        items: instances.map((instance) => instanceJson(instance, query.sources, false)),
        ...(nextCursor === undefined ? {} : { nextCursor }),
        ...(query.includeTyping ? { typing: typingJson(query.sources) } : {}),
      },
      items: instances.length,
    };
  });
}

/** The kinds of `instanceType` that have data in every source and can match the filter. */
export function kindsListed(
  store: InstanceStore,
  instanceType: 'node' | 'edge',
  sources: readonly SelectedSource[],
  filter: CompiledFilter | undefined,
): InstanceKind[] {
  const all: InstanceKind[] = instanceType === 'edge' ? ['edge'] : [...NODE_KINDS];
  const containersOf = (kind: InstanceKind) => store.containersOf(kind);
  const hasSources = (kind: InstanceKind) =>
    sources.every(({ view }) => containerKeysOf(view).every((key) => containersOf(kind).includes(key)));
  const withSources = all.filter(hasSources);
  return possibleKinds(filter, withSources, containersOf);
}
