import type { Clock } from '../util/clock.js';
import type { CursorCodec } from './cursor.js';
import type { Dataset, ResourceName } from './dataset/dataset.js';
import type { FaultPlanner, RateGate, StatusFault } from './faults.js';
import type { SimulatorConfig } from './options.js';
import { partitionRange } from './partition.js';
import { parseListBody } from './list-body.js';
import { type ParseResult, parseListQuery } from './query.js';
import { type Exchange, readResourceBody, sendError, sendText } from './respond.js';
import { increment, type RequestNotes, type SimulatorStats } from './stats.js';

export interface ListContext {
  config: SimulatorConfig;
  dataset: Dataset;
  cursors: CursorCodec;
  planner: FaultPlanner;
  rateGate: RateGate | undefined;
  stats: SimulatorStats;
  clock: Clock;
}

const STATUS_TEXT: Record<Exclude<StatusFault, '429' | '429-retry-after'>, string> = {
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

function throttled(limit: number, what: string): string {
  return `Project exceeded maximum number='${limit}' of ${what}. Please try again later.`;
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
  const { config, stats } = ctx;
  const faults = config.faults;
  const parsed = await readListQuery(ex, route, notes);
  if (!parsed.ok) return sendError(ex, parsed.status ?? 400, parsed.message);
  const query = parsed.query;
  const { resource } = route;

  if (faults.maxConcurrent !== undefined && stats.inFlight >= faults.maxConcurrent) {
    increment(stats.faults, 'concurrency-cap');
    return sendError(ex, 429, throttled(faults.maxConcurrent, 'concurrent requests'));
  }
  if (ctx.rateGate !== undefined && !ctx.rateGate.tryTake()) {
    increment(stats.faults, 'rate-cap');
    return sendError(ex, 429, throttled(faults.maxRps ?? 0, 'requests per second'));
  }

  const set = ctx.dataset[resource];
  const { start, end } = partitionRange(set.count, query.partition);
  let position = start;
  if (query.cursor !== undefined) {
    const decoded = ctx.cursors.decode(query.cursor, query.binding, ctx.clock.now(), faults.cursorTtlMs);
    if (!decoded.ok) {
      if (decoded.reason === 'expired') increment(stats.faults, 'cursor-expired');
      return sendError(ex, 400, decoded.message);
    }
    position = decoded.state.position;
    if (position < start || position > end) return sendError(ex, 400, 'Invalid cursor: out of range.');
  }

  stats.inFlight++;
  stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
  ex.res.once('close', () => ctx.stats.inFlight--);

  const plan = ctx.planner.plan(query.binding, position, query.limit);
  if (plan.delayMs > 0) await ctx.clock.sleep(plan.delayMs);
  if (plan.fault !== undefined) increment(stats.faults, plan.fault);
  switch (plan.fault) {
    case '429':
      return sendError(ex, 429, throttled(50, 'concurrent requests'));
    case '429-retry-after':
      return sendError(ex, 429, throttled(50, 'concurrent requests'), {
        'retry-after': String(faults.retryAfterSeconds),
      });
    case '500':
    case '502':
    case '503':
    case '504':
      return sendServerError(ex, Number(plan.fault), STATUS_TEXT[plan.fault], faults.htmlErrors);
  }

  if (plan.shortLimit !== undefined) increment(stats.faults, 'short-page');
  const pageLimit = plan.shortLimit ?? query.limit;
  const filtered = Object.keys(query.filter).length > 0;
  const budgetEnd = filtered ? Math.min(end, position + config.scanBudget) : end;
  const items: unknown[] = [];
  let next = position;
  for (; next < budgetEnd && items.length < pageLimit; next++) {
    if (!filtered || set.matches(next, query.filter)) items.push(set.item(next, query.includeMetadata));
  }

  const body: { items: unknown[]; nextCursor?: string } = { items };
  if (next < end)
    body.nextCursor = ctx.cursors.encode(query.binding, { position: next, issuedAtMs: ctx.clock.now() });
  const bodyFault = plan.fault;
  if (bodyFault === undefined) {
    stats.pages++;
    stats.items += items.length;
  }
  return sendText(ex, 200, JSON.stringify(body), 'application/json; charset=utf-8', {}, bodyFault);
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

function sendServerError(ex: Exchange, status: number, text: string, html: boolean): Promise<void> {
  if (!html || status === 500) return sendError(ex, status, text);
  const title = `${status} ${text.replace(/\b\w/g, (c) => c.toUpperCase())}`;
  const page = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
  return sendText(ex, status, page, 'text/html');
}
