import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceSpec } from '../../src/resources/index.js';
import { MAX_LIMIT, type Simulator, startSimulator } from '../../src/simulator/index.js';

const DEFAULT_LIMIT = resourceSpec('events').defaultLimit;
import { createFakeClock } from '../support/fake-clock.js';
import { drain, listUrl, type Page, type Reply, send } from '../support/http.js';
import { idOf, idsOf, indexes, type Params } from '../support/items.js';

const API_KEY = 'test-key-123456';
const AUTH = { 'api-key': API_KEY };

interface ErrorBody {
  error: { code: number; message: string; missing?: unknown; duplicated?: unknown };
}

async function get(sim: Simulator, path: string, params: Params): Promise<Reply> {
  return send(listUrl(sim.baseUrl, path, params), { headers: AUTH });
}

async function getPage(sim: Simulator, path: string, params: Params): Promise<Page> {
  const reply = await get(sim, path, params);
  expect(reply.status, reply.text).toBe(200);
  return reply.json<Page>();
}

/**
 * Asserts the platform's error answer: status 400, JSON body `{"error":{"code":400,"message":…}}`
 * (only the optional `missing` / `duplicated` may join code and message). Returns the message.
 */
function expect400(reply: Reply, context: string): string {
  expect(reply.status, `${context}: ${reply.text}`).toBe(400);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  const body = reply.json<ErrorBody>();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(400);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  for (const key of Object.keys(body.error)) {
    expect(['code', 'message', 'missing', 'duplicated']).toContain(key);
  }
  return body.error.message;
}

/** Replaces the character at `index` with a different base64url character. */
function flipAt(text: string, index: number): string {
  const replacement = text[index] === 'A' ? 'B' : 'A';
  return `${text.slice(0, index)}${replacement}${text.slice(index + 1)}`;
}

describe('pagination (seed rules 1-3, DESIGN: limit 1..1000 default 100, last page has no nextCursor)', () => {
  const EVENTS = 1050;
  const ASSETS = 250;
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({
      assets: ASSETS,
      events: EVENTS,
      seed: 7,
      apiKeys: [API_KEY],
      clock: createFakeClock(),
    });
  });
  afterAll(async () => {
    await sim.close();
  });

  describe('response shape', () => {
    it('"every list response is an object with items and, when more data exists, nextCursor (string)"; the last page has NO nextCursor key', async () => {
      const pages: { text: string; page: Page }[] = [];
      let cursor: string | undefined;
      do {
        const reply = await get(sim, '/events', { limit: 400, cursor });
        expect(reply.status).toBe(200);
        expect(reply.headers['content-type']).toMatch(/^application\/json/);
        const page = reply.json<Page>();
        pages.push({ text: reply.text, page });
        cursor = page.nextCursor;
      } while (cursor !== undefined && pages.length < 10);

      expect(pages.map((p) => p.page.items.length)).toEqual([400, 400, 250]);
      for (const { page } of pages.slice(0, -1)) {
        expect(Object.keys(page).sort()).toEqual(['items', 'nextCursor']);
        expect(Array.isArray(page.items)).toBe(true);
        expect(typeof page.nextCursor).toBe('string');
        expect(page.nextCursor?.length).toBeGreaterThan(0);
      }
      const last = pages.at(-1);
      expect(last).toBeDefined();
      expect(Object.keys(last?.page ?? {})).toEqual(['items']);
      expect('nextCursor' in (last?.page ?? {})).toBe(false);
      expect(last?.text).not.toContain('nextCursor');
    });

    it('a set that is an exact multiple of limit ends on a full page without nextCursor (no trailing empty page)', async () => {
      const pages = await drain(sim.baseUrl, '/assets', { limit: 125 }, AUTH);
      expect(pages.map((p) => p.items.length)).toEqual([125, 125]);
      expect(typeof pages[0]?.nextCursor).toBe('string');
      expect(pages[1] && 'nextCursor' in pages[1]).toBe(false);
    });

    it('an empty result is {"items":[]} without nextCursor', async () => {
      const reply = await get(sim, '/events', { minStartTime: Number.MAX_SAFE_INTEGER });
      expect(reply.status).toBe(200);
      expect(reply.json()).toStrictEqual({ items: [] });
    });
  });

  describe('draining', () => {
    it('"the next page is fetched by repeating the request with cursor set to that value": events drain to exactly the dataset in index order', async () => {
      const pages = await drain(sim.baseUrl, '/events', { limit: 97 }, AUTH);
      expect(pages).toHaveLength(Math.ceil(EVENTS / 97));
      expect(idsOf(pages)).toEqual(indexes(EVENTS).map((i) => sim.dataset.events.idOf(i)));
    });

    it('assets drain to exactly the dataset in index order, and each item equals the generated one', async () => {
      const pages = await drain(sim.baseUrl, '/assets', { limit: 33 }, AUTH);
      expect(idsOf(pages)).toEqual(indexes(ASSETS).map((i) => sim.dataset.assets.idOf(i)));
      const items = pages.flatMap((p) => p.items);
      expect(items).toStrictEqual(indexes(ASSETS).map((i) => i).map((i) => sim.dataset.assets.item(i)));
    });
  });

  describe('limit', () => {
    it(`"limit default 100": no limit gives a first page of ${DEFAULT_LIMIT} items with nextCursor`, async () => {
      expect(DEFAULT_LIMIT).toBe(100);
      const page = await getPage(sim, '/events', {});
      expect(page.items.map(idOf)).toEqual(indexes(100).map((i) => sim.dataset.events.idOf(i)));
      expect(typeof page.nextCursor).toBe('string');
      const assets = await getPage(sim, '/assets', {});
      expect(assets.items).toHaveLength(100);
      expect(typeof assets.nextCursor).toBe('string');
    });

    it('"limit 1..1000": limit=1 and limit=1000 are accepted and honoured', async () => {
      expect(MAX_LIMIT).toBe(1000);
      const one = await getPage(sim, '/events', { limit: 1 });
      expect(one.items.map(idOf)).toEqual([sim.dataset.events.idOf(0)]);
      expect(typeof one.nextCursor).toBe('string');

      const pages = await drain(sim.baseUrl, '/events', { limit: 1000 }, AUTH);
      expect(pages.map((p) => p.items.length)).toEqual([1000, EVENTS - 1000]);
      expect(idsOf(pages)).toEqual(indexes(EVENTS).map((i) => sim.dataset.events.idOf(i)));
    });

    it.each(['0', '1001', '5000', 'abc', '1.5', '', '-1', '1e2'])(
      'limit=%j is rejected with 400 and exactly {"error":{"code":400,"message":"…limit…"}}',
      async (limit) => {
        for (const path of ['/events', '/assets']) {
          const reply = await get(sim, path, { limit });
          expect(reply.status, reply.text).toBe(400);
          const body = reply.json<ErrorBody>();
          expect(body).toStrictEqual({ error: { code: 400, message: expect.any(String) } });
          expect(body.error.message).toContain('limit');
        }
      },
    );
  });

  describe('short pages ("a page can hold fewer items than limit while nextCursor is present")', () => {
    it('with faults.shortPageRate=1 pages are shorter (some empty) yet the drain yields every item exactly once', async () => {
      const short = await startSimulator({
        assets: 120,
        events: 300,
        seed: 3,
        apiKeys: [API_KEY],
        clock: createFakeClock(),
        faults: { shortPageRate: 1 },
      });
      try {
        const limit = 5;
        const pages = await drain(short.baseUrl, '/events', { limit }, AUTH);
        for (const page of pages) expect(page.items.length).toBeLessThan(limit);
        const withCursor = pages.filter((p) => p.nextCursor !== undefined);
        expect(withCursor.some((p) => p.items.length === 0)).toBe(true);
        expect(withCursor.some((p) => p.items.length > 0 && p.items.length < limit)).toBe(true);
        expect(idsOf(pages)).toEqual(indexes(300).map((i) => short.dataset.events.idOf(i)));

        const assetPages = await drain(short.baseUrl, '/assets', { limit: 10 }, AUTH);
        expect(assetPages.length).toBeGreaterThan(12);
        expect(idsOf(assetPages)).toEqual(indexes(120).map((i) => short.dataset.assets.idOf(i)));
      } finally {
        await short.close();
      }
    });

    it('with faults.shortPageRate=1 and limit=1 the chain still progresses to the end (an empty page is never repeated)', async () => {
      const short = await startSimulator({
        events: 40,
        apiKeys: [API_KEY],
        clock: createFakeClock(),
        faults: { shortPageRate: 1 },
      });
      try {
        const pages = await drain(short.baseUrl, '/events', { limit: 1 }, AUTH);
        expect(pages.filter((p) => p.items.length === 0).length).toBeGreaterThan(0);
        expect(idsOf(pages)).toEqual(indexes(40).map((i) => short.dataset.events.idOf(i)));
      } finally {
        await short.close();
      }
    });

    it('with a filter and a small scanBudget pages are short but carry a cursor, and the drain equals the matching items', async () => {
      const scan = await startSimulator({
        assets: 10,
        events: 1000,
        seed: 5,
        apiKeys: [API_KEY],
        clock: createFakeClock(),
        scanBudget: 50,
      });
      try {
        const limit = 100;
        const expected = indexes(1000).map((i) => i)
          .filter((i) => scan.dataset.events.matches(i, { type: 'alarm' }))
          .map((i) => scan.dataset.events.idOf(i));
        expect(expected.length).toBeGreaterThan(20);

        const pages = await drain(scan.baseUrl, '/events', { type: 'alarm', limit }, AUTH);
        expect(pages.length).toBeGreaterThanOrEqual(1000 / 50);
        expect(pages.some((p) => p.nextCursor !== undefined && p.items.length < limit)).toBe(true);
        for (const page of pages) {
          expect(page.items.length).toBeLessThanOrEqual(50);
          for (const item of page.items) expect(item.type).toBe('alarm');
        }
        expect(idsOf(pages)).toEqual(expected);

        // A very selective filter: pages with no items at all that still carry a cursor.
        const rare = { type: 'alarm', subtype: 'high', limit };
        const rarePages = await drain(scan.baseUrl, '/events', rare, AUTH);
        expect(rarePages.some((p) => p.items.length === 0 && p.nextCursor !== undefined)).toBe(true);
        expect(idsOf(rarePages)).toEqual(
          indexes(1000).map((i) => i)
            .filter((i) => scan.dataset.events.matches(i, { type: 'alarm', subtype: 'high' }))
            .map((i) => scan.dataset.events.idOf(i)),
        );
      } finally {
        await scan.close();
      }
    });
  });

  describe('cursor binding (seed rule 2, DESIGN: "a cursor whose params do not match the request, or that was tampered with, gets 400")', () => {
    async function cursorFor(path: string, params: Params): Promise<string> {
      const page = await getPage(sim, path, params);
      expect(typeof page.nextCursor).toBe('string');
      return page.nextCursor ?? '';
    }

    it('the same params with the cursor are accepted (control)', async () => {
      const base = { limit: 10, type: 'alarm', partition: '1/3', includeMetadata: 'false' };
      const cursor = await cursorFor('/events', base);
      const page = await getPage(sim, '/events', { ...base, cursor });
      expect(page.items.length).toBeGreaterThan(0);
    });

    it.each<[string, string, Params, string, Params]>([
      ['a different limit', '/events', { limit: 10 }, '/events', { limit: 11 }],
      ['limit dropped', '/events', { limit: 10 }, '/events', {}],
      ['a filter added', '/events', { limit: 10 }, '/events', { limit: 10, type: 'alarm' }],
      [
        'a filter changed',
        '/events',
        { limit: 10, type: 'alarm' },
        '/events',
        { limit: 10, type: 'failure' },
      ],
      ['a filter dropped', '/events', { limit: 10, type: 'alarm' }, '/events', { limit: 10 }],
      [
        'a time filter changed',
        '/events',
        { limit: 10, minStartTime: 0 },
        '/events',
        { limit: 10, minStartTime: 1 },
      ],
      ['partition added', '/events', { limit: 10 }, '/events', { limit: 10, partition: '1/1' }],
      [
        'another partition m',
        '/events',
        { limit: 10, partition: '1/3' },
        '/events',
        { limit: 10, partition: '2/3' },
      ],
      [
        'another partition n',
        '/events',
        { limit: 10, partition: '1/3' },
        '/events',
        { limit: 10, partition: '1/4' },
      ],
      ['partition dropped', '/events', { limit: 10, partition: '1/3' }, '/events', { limit: 10 }],
      [
        'includeMetadata false -> true',
        '/events',
        { limit: 10, includeMetadata: 'false' },
        '/events',
        { limit: 10, includeMetadata: 'true' },
      ],
      [
        'includeMetadata false -> absent',
        '/events',
        { limit: 10, includeMetadata: 'false' },
        '/events',
        { limit: 10 },
      ],
      [
        'includeMetadata absent -> false',
        '/assets',
        { limit: 10 },
        '/assets',
        { limit: 10, includeMetadata: 'false' },
      ],
      ['the other resource (events -> assets)', '/events', { limit: 10 }, '/assets', { limit: 10 }],
      ['the other resource (assets -> events)', '/assets', { limit: 10 }, '/events', { limit: 10 }],
    ])('a cursor reused with %s gets 400', async (_name, fromPath, from, toPath, to) => {
      const cursor = await cursorFor(fromPath, from);
      const message = expect400(await get(sim, toPath, { ...to, cursor }), `${toPath} ${JSON.stringify(to)}`);
      expect(message).toMatch(/cursor/i);
    });

    it('a tampered cursor (a character flipped in the payload part or in the signature part, cut, or extended) gets 400', async () => {
      const cursor = await cursorFor('/events', { limit: 10 });
      expect(cursor.length).toBeGreaterThan(8);
      const dot = cursor.indexOf('.');
      const variants = new Set([
        flipAt(cursor, 1),
        flipAt(cursor, Math.floor(cursor.length / 4)),
        flipAt(cursor, Math.floor(cursor.length / 2)),
        flipAt(cursor, cursor.length - 2),
        flipAt(cursor, cursor.length - 1),
        cursor.slice(0, -1),
        `${cursor}A`,
        `A${cursor}`,
      ]);
      if (dot > 0) {
        variants.add(flipAt(cursor, Math.floor(dot / 2))); // payload part
        variants.add(flipAt(cursor, dot + Math.floor((cursor.length - dot) / 2))); // signature part
        variants.add(cursor.slice(0, dot)); // payload without signature
      }
      variants.delete(cursor);
      for (const tampered of variants) {
        const message = expect400(await get(sim, '/events', { limit: 10, cursor: tampered }), tampered);
        expect(message).toMatch(/cursor/i);
      }
    });

    it('a garbage cursor gets 400', async () => {
      for (const garbage of ['garbage', 'abc.def', '.', '..', 'eyJ4IjoxfQ', '%%%', ' ', '0']) {
        const message = expect400(await get(sim, '/events', { limit: 10, cursor: garbage }), garbage);
        expect(message).toMatch(/cursor/i);
      }
    });

    it("cursor='' gets 400", async () => {
      const message = expect400(await get(sim, '/events', { cursor: '' }), "cursor=''");
      expect(message).toMatch(/cursor/i);
      expect400(await get(sim, '/assets', { limit: 5, cursor: '' }), "assets cursor=''");
    });

    it('a cursor issued by a simulator with another seed gets 400 ("not issued by this service")', async () => {
      const other = await startSimulator({
        assets: ASSETS,
        events: EVENTS,
        seed: 8,
        apiKeys: [API_KEY],
        clock: createFakeClock(),
      });
      try {
        const page = await getPage(other, '/events', { limit: 10 });
        expect(typeof page.nextCursor).toBe('string');
        expect400(await get(sim, '/events', { limit: 10, cursor: page.nextCursor }), 'foreign cursor');
      } finally {
        await other.close();
      }
    });
  });

  describe('parameter validation (the platform validates strictly)', () => {
    it('an unknown query parameter gets 400 naming it', async () => {
      for (const [path, name] of [
        ['/events', 'foo'],
        ['/assets', 'bar'],
        ['/events', 'Limit'],
        ['/events', 'externalIdSuffix'],
      ] as const) {
        const message = expect400(await get(sim, path, { [name]: '1' }), `${path}?${name}`);
        expect(message).toContain(name);
      }
    });

    it('a parameter given twice gets 400 naming it', async () => {
      for (const [path, query, name] of [
        ['/events', 'limit=10&limit=10', 'limit'],
        ['/events', 'type=alarm&type=failure', 'type'],
        ['/assets', 'partition=1/2&partition=1/2', 'partition'],
        ['/assets', 'includeMetadata=true&limit=5&includeMetadata=true', 'includeMetadata'],
      ] as const) {
        const reply = await send(`${sim.baseUrl}${path}?${query}`, { headers: AUTH });
        expect(expect400(reply, query)).toContain(name);
      }
    });

    it.each([
      '0/3',
      '4/3',
      '1/11',
      '11/11',
      'a/b',
      '1/0',
      '1-3',
      '1/',
      '/3',
      '',
      '1/3/5',
      ' 1/3',
      '-1/3',
      '1.0/3',
    ])('partition=%j is malformed or out of range (n <= 10, 1 <= m <= n) and gets 400', async (partition) => {
      for (const path of ['/events', '/assets']) {
        expect(expect400(await get(sim, path, { partition }), `${path} partition=${partition}`)).toContain(
          'partition',
        );
      }
    });

    it('partition with n = 10 (the maximum) is accepted on both resources', async () => {
      for (const path of ['/events', '/assets']) {
        for (const partition of ['1/10', '10/10']) {
          const page = await getPage(sim, path, { partition });
          expect(page.items.length).toBeGreaterThan(0);
        }
      }
    });

    it('a bad time filter value (-1, abc, 1e3, 1.5, empty) gets 400 naming the parameter', async () => {
      const cases: [string, string][] = [
        ['/events', 'minLastUpdatedTime'],
        ['/events', 'maxLastUpdatedTime'],
        ['/events', 'minStartTime'],
        ['/events', 'maxStartTime'],
        ['/assets', 'minLastUpdatedTime'],
        ['/assets', 'maxLastUpdatedTime'],
      ];
      for (const [path, name] of cases) {
        for (const value of ['-1', 'abc', '1e3', '1.5', '']) {
          const message = expect400(await get(sim, path, { [name]: value }), `${path} ${name}=${value}`);
          expect(message).toContain(name);
        }
        const ok = await get(sim, path, { [name]: 1000 });
        expect(ok.status, `${path} ${name}=1000`).toBe(200);
      }
    });

    it('includeMetadata other than true/false gets 400', async () => {
      for (const value of ['TRUE', 'False', '1', '0', 'yes', '']) {
        for (const path of ['/events', '/assets']) {
          const message = expect400(await get(sim, path, { includeMetadata: value }), value);
          expect(message).toContain('includeMetadata');
        }
      }
      for (const value of ['true', 'false']) {
        expect((await get(sim, '/events', { includeMetadata: value })).status).toBe(200);
      }
    });

    // GET /assets takes `source` too (PLATFORM.md), so it is not among them.
    it('/assets rejects the event-only filters (type, subtype, min/maxStartTime) with 400 naming them', async () => {
      const eventOnly: Params = {
        type: 'alarm',
        subtype: 'high',
        minStartTime: 0,
        maxStartTime: 0,
      };
      for (const [name, value] of Object.entries(eventOnly)) {
        const message = expect400(await get(sim, '/assets', { [name]: value }), `/assets ${name}`);
        expect(message).toContain(name);
        expect((await get(sim, '/events', { [name]: value })).status).toBe(200);
      }
    });
  });

  describe('request ids (DESIGN: "every response carries an X-Request-Id header")', () => {
    it('200, 400, 401 and 404 answers all carry an x-request-id, distinct across requests', async () => {
      const replies: Reply[] = [];
      for (let i = 0; i < 3; i++) replies.push(await get(sim, '/events', { limit: 5 }));
      replies.push(await get(sim, '/assets', { limit: 5 }));
      replies.push(await get(sim, '/events', { limit: 0 }));
      replies.push(await get(sim, '/events', { nope: 1 }));
      replies.push(await get(sim, '/assets', { cursor: 'garbage' }));
      replies.push(await send(listUrl(sim.baseUrl, '/events', {})));
      replies.push(await send(`${sim.baseUrl}/unknown`, { headers: AUTH }));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 400, 400, 400, 401, 404]);

      const ids = replies.map((r) => r.headers['x-request-id']);
      for (const id of ids) {
        expect(typeof id).toBe('string');
        expect(String(id).length).toBeGreaterThan(0);
      }
      expect(new Set(ids).size).toBe(ids.length);
    });
  });
});
