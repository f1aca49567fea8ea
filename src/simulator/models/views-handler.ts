import { capReached } from '../fault-response.js';
import { isRecord, shown } from '../filter-object.js';
import { MAX_LIMIT } from '../query.js';
import { type Exchange, readResourceBody, sendError } from '../respond.js';
import { increment, type RequestNotes } from '../stats.js';
import { attempt, booleanAt, invalid, invalidParameter, objectAt, type Parsed, stringAt } from './body-parts.js';
import { type ViewDefinition, VIEWS } from './core-model.js';
import { type ModelsContext, serveFaulted } from './models-context.js';
import { viewJson } from './view-json.js';

const LIST_PARAMETERS = ['limit', 'cursor', 'space', 'includeInheritedProperties', 'allVersions', 'includeGlobal'];

interface ViewsListQuery {
  limit: number;
  cursor: string | undefined;
  space: string | undefined;
  includeInheritedProperties: boolean;
  includeGlobal: boolean;
  binding: string;
}

/** A query parameter `true` or `false`; its default when absent. */
function flag(params: URLSearchParams, name: string, fallback: boolean): boolean {
  const text = params.get(name);
  if (text === null) return fallback;
  return text === 'true' || (text !== 'false' && invalidParameter(name, `expected true or false, got '${text}'.`));
}

/**
 * The query of `GET /models/views`: `limit` (1..1000, default 10), `cursor`, `space`,
 * `includeInheritedProperties` (default true), `allVersions` (default false; every view has one
 * version), `includeGlobal` (default false: the `cdf_cdm` views are global, as on the platform).
 */
export function parseViewsList(params: URLSearchParams): Parsed<ViewsListQuery> {
  return attempt(() => {
    const seen = new Set<string>();
    for (const key of params.keys()) {
      if (!LIST_PARAMETERS.includes(key)) invalidParameter(key, `unrecognized. Allowed: ${LIST_PARAMETERS.join(', ')}.`);
      if (seen.has(key)) invalidParameter(key, 'given more than once.');
      seen.add(key);
    }
    const limitText = params.get('limit') ?? '10';
    const limit = Number(limitText);
    if (!/^[0-9]+$/.test(limitText) || limit < 1 || limit > MAX_LIMIT) invalidParameter('limit', `expected an integer in 1..${MAX_LIMIT}, got '${limitText}'.`);
    const cursor = params.get('cursor') ?? undefined;
    const space = params.get('space') ?? undefined;
    const includeInheritedProperties = flag(params, 'includeInheritedProperties', true);
    const allVersions = flag(params, 'allVersions', false);
    const includeGlobal = flag(params, 'includeGlobal', false);
    const binding = JSON.stringify(['views', limit, space ?? null, includeInheritedProperties, allVersions, includeGlobal]);
    return { limit, cursor: cursor === '' ? invalidParameter('cursor', 'must not be empty.') : cursor, space, includeInheritedProperties, includeGlobal, binding };
  });
}

/** `GET {base}/models/views`: the views, a page at a time, in a stable order. */
export async function handleViewsList(ctx: ModelsContext, ex: Exchange): Promise<void> {
  const parsed = parseViewsList(ex.url.searchParams);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const query = parsed.value;
  const capped = capReached(ctx.config.faults, ctx.rateGate, ctx.stats);
  if (capped !== undefined) return sendError(ex, 429, capped);
  let position = 0;
  if (query.cursor !== undefined) {
    const decoded = ctx.cursors.decode(query.cursor, query.binding, ctx.clock.now(), ctx.config.faults.cursorTtlMs);
    if (!decoded.ok) {
      if (decoded.reason === 'expired') increment(ctx.stats.faults, 'cursor-expired');
      return sendError(ex, 400, decoded.message);
    }
    position = decoded.state.position;
  }
  const listed = VIEWS.filter(
    (view) => (query.space === undefined || view.space === query.space) && (query.includeGlobal || !view.isGlobal),
  );
  return serveFaulted(ctx, ex, { binding: query.binding, position, limit: query.limit }, (limit) => {
    const end = Math.min(listed.length, position + limit);
    const items = listed.slice(position, end).map((view) => viewJson(view, query.includeInheritedProperties));
    const state = { position: end, issuedAtMs: ctx.clock.now() };
    const next = end < listed.length ? ctx.cursors.encode(query.binding, state) : undefined;
    return { body: { items, ...(next === undefined ? {} : { nextCursor: next }) }, items: items.length };
  });
}

interface ViewsByIds {
  views: ViewDefinition[];
  includeInheritedProperties: boolean;
  binding: string;
}

/**
 * The body of `POST /models/views/byids`: `items` (1..100 of `{space, externalId, version?}`;
 * without a version, every version). `includeInheritedProperties` is taken in the body (where the
 * official SDK sends it) or in the query (where the platform's API reference puts it).
 */
export function parseViewsByIds(body: unknown, params: URLSearchParams): Parsed<ViewsByIds> {
  return attempt(() => {
    for (const key of params.keys()) {
      if (key !== 'includeInheritedProperties') invalidParameter(key, 'unrecognized. Allowed: includeInheritedProperties.');
    }
    const given = objectAt(body, '', ['items', 'includeInheritedProperties']);
    const inQuery = flag(params, 'includeInheritedProperties', true);
    const includeInheritedProperties = booleanAt(given.includeInheritedProperties, 'includeInheritedProperties', inQuery);
    const items = given.items;
    if (!Array.isArray(items) || items.length === 0 || items.length > 100) return invalid('items', `expected 1 to 100 view ids, got ${shown(items)}.`);
    const views = new Set<ViewDefinition>();
    items.forEach((item, i) => {
      const at = `items[${i}]`;
      if (!isRecord(item)) invalid(at, `expected {space, externalId, version?}, got ${shown(item)}.`);
      const id = objectAt(item, at, ['space', 'externalId', 'version', 'type']);
      const space = stringAt(id.space, `${at}.space`);
      const externalId = stringAt(id.externalId, `${at}.externalId`);
      const version = id.version === undefined ? undefined : stringAt(id.version, `${at}.version`);
      for (const view of VIEWS) {
        const same = view.space === space && view.externalId === externalId;
        if (same && (version === undefined || view.version === version)) views.add(view);
      }
    });
    return { views: [...views], includeInheritedProperties, binding: JSON.stringify(['views/byids', given]) };
  });
}

/**
 * `POST {base}/models/views/byids`: the views asked for that exist, in the order asked; one that
 * does not exist is left out, as the platform does (its SDK returns nothing for it). Caps,
 * latency and status and body faults apply; a byids answer is never short.
 */
export async function handleViewsByIds(ctx: ModelsContext, ex: Exchange, notes: RequestNotes): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseViewsByIds(body.value, ex.url.searchParams);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const capped = capReached(ctx.config.faults, ctx.rateGate, ctx.stats);
  if (capped !== undefined) return sendError(ex, 429, capped);
  const { views, includeInheritedProperties, binding } = parsed.value;
  return serveFaulted(ctx, ex, { binding, position: 0, limit: views.length }, () => ({
    body: { items: views.map((view) => viewJson(view, includeInheritedProperties)) },
    items: views.length,
  }));
}
