import type { Dataset, ResourceName } from './dataset/dataset.js';
import { capReached, countInFlight, isStatusFault, sendStatusFault } from './fault-response.js';
import { PartitionIndexes } from './partition.js';
import { parseListBody } from './list-body.js';
import { type ListQuery, type ParseResult, parseListQuery } from './query.js';
import { type Exchange, readResourceBody, sendError, sendText } from './respond.js';
import type { ServeContext } from './serve-context.js';
import { increment, type RequestNotes, type SimulatorStats } from './stats.js';

/** What the collections' lists read: what every data route reads, and the collections. */
export interface ListContext extends ServeContext {
  dataset: Dataset;
}

/**
 * `GET {base}/{resource}` (parameters in the query) and `POST {base}/{resource}/list` (in a JSON
 * body) for an authenticated principal: the same pages, faults and caps either way.
 */
export async function handleList(
  ctx: ListContext,
  ex: Exchange,
  route: { resource: ResourceName; method: 'GET' | 'POST' },
  notes: RequestNotes,
): Promise<void> {
  const { stats } = ctx;
  const parsed = await readListQuery(ex, route, notes);
  if (!parsed.ok) return sendError(ex, parsed.status ?? 400, parsed.message);
  const { query } = parsed;
  const capped = capReached(ctx.config.faults, ctx.rateGate, stats);
  if (capped !== undefined) return sendError(ex, 429, capped);

  const set = ctx.dataset[route.resource];
  const indexes = new PartitionIndexes(set.generated, set.count, query.partition);
  const position = startOf(ctx, stats, query, indexes);
  if (typeof position === 'string') return sendError(ex, 400, position);

  countInFlight(ex, () => ctx.stats);

  const plan = ctx.planner.plan(query.binding, position, query.limit);
  if (plan.delayMs > 0) await ctx.clock.sleep(plan.delayMs);
  if (plan.fault !== undefined) increment(stats.faults, plan.fault);
  if (isStatusFault(plan.fault)) return sendStatusFault(ex, plan.fault, ctx.config.faults);

  if (plan.shortLimit !== undefined) increment(stats.faults, 'short-page');
  const page = pageAt(ctx, set, query, position, indexes, plan.shortLimit ?? query.limit);
  if (plan.fault === undefined) {
    stats.pages++;
    stats.items += page.items.length;
  }
  return sendText(ex, 200, JSON.stringify(page), 'application/json; charset=utf-8', {}, plan.fault);
}

/** Where the page starts: the partition's start, or the cursor's position; a string says why the cursor is refused. */
function startOf(
  ctx: ListContext,
  stats: SimulatorStats,
  query: ListQuery,
  indexes: PartitionIndexes,
): number | string {
  if (query.cursor === undefined) return indexes.first;
  const decoded = ctx.cursors.decode(query.cursor, query.binding, ctx.clock.now(), ctx.config.faults.cursorTtlMs);
  if (!decoded.ok) {
    if (decoded.reason === 'expired') increment(stats.faults, 'cursor-expired');
    return decoded.message;
  }
  const { position } = decoded.state;
  return indexes.includes(position) ? position : 'Invalid cursor: out of range.';
}

/**
 * The items of the page from `position`, at most `limit`, and the cursor after them unless the
 * partition ends there. A filtered page scans at most `scanBudget` items, so it may come back short.
 */
function pageAt(
  ctx: ListContext,
  set: Dataset[ResourceName],
  query: ListQuery,
  position: number,
  indexes: PartitionIndexes,
  limit: number,
): { items: unknown[]; nextCursor?: string } {
  const filtered = Object.keys(query.filter).length > 0;
  const budget = filtered ? ctx.config.scanBudget : Infinity;
  const items: unknown[] = [];
  let next = position;
  for (let scanned = 0; next < indexes.total && scanned < budget && items.length < limit; scanned++) {
    if (!filtered || set.matches(next, query.filter)) items.push(set.item(next, query.includeMetadata));
    next = indexes.after(next);
  }
  if (next >= indexes.total) return { items };
  return { items, nextCursor: ctx.cursors.encode(query.binding, { position: next, issuedAtMs: ctx.clock.now() }) };
}

async function readListQuery(
  ex: Exchange,
  { resource, method }: { resource: ResourceName; method: 'GET' | 'POST' },
  notes: RequestNotes,
): Promise<ParseResult & { status?: number }> {
  if (method === 'GET') return parseListQuery(resource, ex.url.searchParams);
  const body = await readResourceBody(ex, notes);
  return body.ok ? parseListBody(resource, body.value) : body;
}
