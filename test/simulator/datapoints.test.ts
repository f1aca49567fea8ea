import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SeriesPoints, type Simulator, startSimulator } from '../../src/simulator/index.js';
import {
  type AnswerItem,
  answerItems,
  drainQueries,
  expectedRawPoints,
  postPoints,
} from '../support/datapoints.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { type Reply, send } from '../support/http.js';

/**
 * `POST /timeseries/data/list` over loopback, raw points: windows, cursor chains per query,
 * limits, unknown ids, relative times, bad points, validation, auth. Every answer is compared with
 * the generator's points, recomputed the long way (test/support/datapoints.ts).
 */
const API_KEY = 'datapoints-test-key-1';
const AUTH = { 'api-key': API_KEY };
const DAY = 86_400_000;

let sim: Simulator;
let clock: FakeClock;

/** The series the tests read, picked by what they hold (seed 5 has one of each). */
const picked = { longNumeric: 0, badNumeric: 0, badString: 0, step: 0, historical: 0, empty: 0, instance: 0 };

beforeAll(async () => {
  clock = createFakeClock();
  sim = await startSimulator({ seed: 5, timeseries: 60, datapoints: 300_000, apiKeys: [API_KEY], clock });
  const all = Array.from({ length: 60 }, (_, index) => ({
    index,
    item: sim.dataset.timeseries.item(index),
    points: sim.dataset.datapoints.series(index),
  }));
  const pick = (what: string, test: (one: (typeof all)[number]) => boolean) => {
    const found = all.filter(test).sort((a, b) => b.points.count - a.points.count)[0];
    if (found === undefined) throw new Error(`seed 5 has no series that is ${what}`);
    return found.index;
  };
  picked.longNumeric = pick('numeric and long', ({ item }) => !item.isString && !item.isStep);
  picked.badNumeric = pick('numeric with bad points', ({ item, points }) => !item.isString && points.shape.badShare > 0.02);
  picked.badString = pick('a string series with bad points', ({ item, points }) => item.isString && points.shape.badShare > 0);
  picked.step = pick('a numeric step series', ({ item }) => !item.isString && item.isStep);
  picked.historical = pick('across 1970', ({ points }) => points.count > 100 && points.first < 0);
  picked.empty = pick('empty', ({ points }) => points.count === 0);
  picked.instance = pick('with an instanceId', ({ item, points }) => item.instanceId !== undefined && points.count > 100);
});

afterAll(async () => {
  await sim.close();
});

const idOf = (index: number) => sim.dataset.timeseries.idOf(index);
const seriesOf = (index: number): SeriesPoints => sim.dataset.datapoints.series(index);
/** A window that holds every point of the simulator's series but the historical ones' before 1970. */
const ALL = { start: 0, end: Date.UTC(2030, 0, 1) };

function message(reply: Reply, status = 400): string {
  expect(reply.status, reply.text).toBe(status);
  return reply.json<{ error: { code: number; message: string } }>().error.message;
}

describe('POST /timeseries/data/list: raw points', () => {
  it('answers each query in order with the series\' identity and kind, and its points', async () => {
    const indexes = [picked.longNumeric, picked.badString, picked.instance, picked.empty];
    const items = await answerItems(sim, { items: indexes.map((index) => ({ id: idOf(index), limit: 5 })) }, AUTH);
    expect(items.map((item) => item.id)).toEqual(indexes.map(idOf));
    items.forEach((item, position) => {
      const series = sim.dataset.timeseries.item(indexes[position] ?? -1);
      const { id, isString, isStep, type } = series;
      const identity: Partial<AnswerItem> = { id, isString, isStep, type };
      for (const key of ['externalId', 'instanceId', 'unit', 'unitExternalId'] as const) {
        if (series[key] !== undefined) Object.assign(identity, { [key]: series[key] });
      }
      const { datapoints, nextCursor, ...rest } = item;
      expect(rest).toEqual(identity);
      const expected = expectedRawPoints(seriesOf(indexes[position] ?? -1), 0, clock.now()).slice(0, 5);
      expect(datapoints).toEqual(expected);
      expect(nextCursor !== undefined).toBe(seriesOf(indexes[position] ?? -1).count > 5);
    });
    expect(items[3]?.datapoints).toEqual([]);
  });

  it('finds a series by id, externalId and instanceId alike', async () => {
    const series = sim.dataset.timeseries.item(picked.instance);
    const refs = [{ id: series.id }, { externalId: series.externalId }, { instanceId: series.instanceId }];
    const items = await answerItems(sim, { limit: 50, items: refs }, AUTH);
    expect(items.map((item) => item.id)).toEqual([series.id, series.id, series.id]);
    expect(items[1]?.datapoints).toEqual(items[0]?.datapoints);
    expect(items[2]?.datapoints).toEqual(items[0]?.datapoints);
    expect(items[0]?.datapoints).toHaveLength(50);
  });

  it('includes start and excludes end, to the millisecond', async () => {
    const series = seriesOf(picked.longNumeric);
    const [from, to] = [1000, 1010].map((k) => series.timestampOf(k)) as [number, number];
    const window = async (start: number, end: number) =>
      (await answerItems(sim, { items: [{ id: idOf(picked.longNumeric), start, end, limit: 1000 }] }, AUTH))[0];
    const exact = await window(from, to);
    const timestamps = Array.from({ length: 10 }, (_, k) => series.timestampOf(1000 + k));
    expect(exact?.datapoints.map((point) => point.timestamp)).toEqual(timestamps);
    expect(exact?.datapoints).toEqual(expectedRawPoints(series, from, to));
    expect(exact?.nextCursor).toBeUndefined();
    const shifted = await window(from + 1, to + 1);
    expect(shifted?.datapoints[0]?.timestamp).toBe(series.timestampOf(1001));
    expect(shifted?.datapoints.at(-1)?.timestamp).toBe(series.timestampOf(1010));
  });

  it('leaves points before 1970 out by default (start 0) and gives them for a negative start', async () => {
    const series = seriesOf(picked.historical);
    const query = { id: idOf(picked.historical) };
    const { points } = await drainQueries(sim, { items: [{ ...query, limit: 1000 }] }, AUTH);
    expect(points[0]).toEqual(expectedRawPoints(series, 0, clock.now()));
    const early = await drainQueries(sim, { items: [{ ...query, limit: 1000, start: series.first }] }, AUTH);
    expect(early.points[0]).toEqual(expectedRawPoints(series, series.first, clock.now()));
    expect(early.points[0]?.length).toBeGreaterThan(points[0]?.length ?? 0);
    expect(early.points[0]?.[0]?.timestamp).toBeLessThan(0);
  });

  it('drains several series exactly with their cursor chains, the 100,000 points split over the queries', async () => {
    const { longNumeric, badNumeric, badString, step, instance, empty } = picked;
    const indexes = [longNumeric, badNumeric, badString, step, instance, empty];
    const limits = [40_000, 25_000, 15_000, 10_000, 9_999, 1];
    const items = indexes.map((index, position) => ({ id: idOf(index), limit: limits[position], ...ALL }));
    const { points, requests } = await drainQueries(sim, { items }, AUTH);
    indexes.forEach((index, position) => {
      expect(points[position], `series ${index}`).toEqual(expectedRawPoints(seriesOf(index), ALL.start, ALL.end));
    });
    expect(requests).toBeGreaterThan(1);
  });

  it('drains a long series in small pages, each with at most its limit, the last one without nextCursor', async () => {
    const series = seriesOf(picked.longNumeric);
    const query = { id: idOf(picked.longNumeric), limit: 997, includeStatus: true, ignoreBadDataPoints: false };
    const pages: AnswerItem[] = [];
    let cursor: string | undefined;
    do {
      const [item] = await answerItems(sim, { items: [cursor === undefined ? query : { ...query, cursor }] }, AUTH);
      if (item === undefined) throw new Error('no item');
      pages.push(item);
      cursor = item.nextCursor;
    } while (cursor !== undefined);
    expect(pages.length).toBe(Math.ceil(series.count / 997));
    expect(pages.slice(0, -1).every((page) => page.datapoints.length === 997)).toBe(true);
    expect(pages.flatMap((page) => page.datapoints)).toEqual(expectedRawPoints(series, 0, clock.now(), query));
  });

  it('gives no nextCursor when the window holds exactly `limit` points', async () => {
    const series = seriesOf(picked.longNumeric);
    const [item] = await answerItems(sim, {
      items: [{ id: idOf(picked.longNumeric), start: series.timestampOf(10), end: series.timestampOf(30), limit: 20 }],
    }, AUTH);
    expect(item?.datapoints).toHaveLength(20);
    expect(item?.nextCursor).toBeUndefined();
  });

  it('reads N[w|d|h|m|s]-ago against the clock', async () => {
    const at = createFakeClock();
    const now = at.now();
    const local = await startSimulator({ seed: 5, timeseries: 60, datapoints: 300_000, apiKeys: [API_KEY], clock: at });
    try {
      // A live series: its points reach the clock's now.
      const index = Array.from({ length: 60 }, (_, one) => one)
        .filter((one) => !local.dataset.timeseries.item(one).isString && local.dataset.datapoints.series(one).live)
        .sort((a, b) => local.dataset.datapoints.countOf(b) - local.dataset.datapoints.countOf(a))[0] ?? -1;
      const series = local.dataset.datapoints.series(index);
      for (const [start, end, from, to] of [
        ['1d-ago', 'now', now - DAY, now],
        ['36h-ago', '720m-ago', now - 1.5 * DAY, now - DAY / 2],
        ['1w-ago', '86400s-ago', now - 7 * DAY, now - DAY],
      ] as const) {
        const body = { start, end, items: [{ id: local.dataset.timeseries.idOf(index), limit: 5000 }] };
        const { points } = await drainQueries(local, body, AUTH);
        expect(points[0], `${start}..${end}`).toEqual(expectedRawPoints(series, from, to));
        expect(points[0]?.length).toBeGreaterThan(0);
      }
    } finally {
      await local.close();
    }
  });

  it('refuses more than 100,000 raw points in total, naming the limit', async () => {
    const items = [{ id: idOf(picked.longNumeric), limit: 60_000 }, { id: idOf(picked.badNumeric), limit: 40_001 }];
    expect(message(await postPoints(sim, { items }, AUTH))).toContain("Invalid property 'limit': the raw queries' limits add up to 100001");
    const many = Array.from({ length: 100 }, () => ({ id: idOf(picked.longNumeric) }));
    expect(message(await postPoints(sim, { limit: 1001, items: many }, AUTH))).toContain('add up to 100100');
    expect((await postPoints(sim, { limit: 1000, items: many }, AUTH)).status).toBe(200);
  });

  it('answers unknown ids with a 400 that lists them, or leaves them out with ignoreUnknownIds', async () => {
    const known = { id: idOf(picked.step) };
    const unknown = [{ id: 42 }, { externalId: 'no-such-series' }, { instanceId: { space: 'sp_timeseries', externalId: 'nope' } }];
    const body = { limit: 3, items: [unknown[0], known, ...unknown.slice(1), unknown[0]] };
    const reply = await postPoints(sim, body, AUTH);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: { code: 400, message: 'Time series ids not found', missing: unknown } });
    const items = await answerItems(sim, { ...body, ignoreUnknownIds: true }, AUTH);
    expect(items.map((item) => item.id)).toEqual([known.id]);
    expect(items[0]?.datapoints).toHaveLength(3);
  });

  it('shows bad points and statuses only when asked, shaped as the platform sends them', async () => {
    const flagsList = [
      {},
      { includeStatus: true },
      { ignoreBadDataPoints: false },
      { ignoreBadDataPoints: false, includeStatus: true },
      { treatUncertainAsBad: false, includeStatus: true },
      { ignoreBadDataPoints: false, treatUncertainAsBad: false, includeStatus: true },
    ];
    for (const index of [picked.badNumeric, picked.badString]) {
      const items = flagsList.map((flags) => ({ id: idOf(index), limit: 8000, ...flags }));
      const { points } = await drainQueries(sim, { items }, AUTH);
      flagsList.forEach((flags, position) => {
        const expected = expectedRawPoints(seriesOf(index), 0, clock.now(), flags);
        expect(points[position], JSON.stringify(flags)).toEqual(expected);
      });
      const [plain, , , everything] = points;
      expect(plain?.every((point) => point.status === undefined)).toBe(true);
      expect(everything?.length).toBeGreaterThan(plain?.length ?? 0);
      const symbolOf = (point: Record<string, unknown>) => (point.status as { symbol?: string } | undefined)?.symbol;
      const symbols = new Set(everything?.map((point) => symbolOf(point)?.slice(0, 3)));
      expect(symbols).toEqual(new Set([undefined, 'Bad', 'Unc']));
    }
    const all = { limit: 10_000, ignoreBadDataPoints: false, includeStatus: true };
    const { points } = await drainQueries(sim, { items: [{ id: idOf(picked.badNumeric), ...all }] }, AUTH);
    const texts = new Set(points[0]?.map((point) => point.value).filter((value) => typeof value === 'string'));
    expect(texts).toEqual(new Set(['NaN', 'Infinity', '-Infinity']));
    const strings = await drainQueries(sim, { items: [{ id: idOf(picked.badString), ...all }] }, AUTH);
    const withoutValue = strings.points[0]?.filter((point) => !('value' in point)) ?? [];
    expect(withoutValue.length).toBeGreaterThan(0);
    expect(withoutValue.every((point) => (point.status as { code: number }).code >= 0x80000000)).toBe(true);
  });

  it('adds the points just outside the window with includeOutsidePoints, beyond the limit', async () => {
    const series = seriesOf(picked.longNumeric);
    const [start, end] = [series.timestampOf(100) - 1, series.timestampOf(130)];
    const query = { id: idOf(picked.longNumeric), start, end, limit: 10, includeOutsidePoints: true };
    const { points, requests } = await drainQueries(sim, { items: [query] }, AUTH);
    expect(requests).toBe(3);
    const expected = expectedRawPoints(series, series.timestampOf(99), series.timestampOf(131));
    expect(points[0]).toEqual(expected);
    expect(points[0]?.[0]?.timestamp).toBe(series.timestampOf(99));
    expect(points[0]?.at(-1)?.timestamp).toBe(series.timestampOf(130));
  });

  it('takes targetUnit and targetUnitSystem and converts nothing', async () => {
    const query = { id: idOf(picked.longNumeric), limit: 20 };
    const items = [query, { ...query, targetUnit: 'temperature:deg_f' }, { ...query, targetUnitSystem: 'Imperial' }];
    const [plain, ...converted] = await answerItems(sim, { items }, AUTH);
    const { nextCursor: _cursor, ...rest } = plain ?? { nextCursor: undefined };
    for (const item of converted) {
      expect(item.nextCursor).toEqual(expect.any(String));
      expect({ ...item, nextCursor: undefined }).toEqual({ ...rest, nextCursor: undefined });
    }
  });
});

describe('POST /timeseries/data/list: cursors', () => {
  async function firstCursor(query: Record<string, unknown>): Promise<string> {
    const [item] = await answerItems(sim, { items: [query] }, AUTH);
    if (item?.nextCursor === undefined) throw new Error('no cursor');
    return item.nextCursor;
  }

  it('refuses a cursor replayed with another query, naming the query\'s cursor', async () => {
    const query = { id: idOf(picked.longNumeric), limit: 10, start: 0 };
    const cursor = await firstCursor(query);
    for (const other of [
      { ...query, limit: 11 },
      { ...query, start: 1 },
      { ...query, includeStatus: true },
      { ...query, id: idOf(picked.badNumeric) },
      { externalId: sim.dataset.timeseries.item(picked.longNumeric).externalId, limit: 10, start: 0 },
    ]) {
      const text = message(await postPoints(sim, { items: [{ id: idOf(picked.step) }, { ...other, cursor }] }, AUTH));
      expect(text).toMatch(/^Invalid property 'items\[1\]\.cursor': Cursor does not match the request parameters/);
    }
    // The same query with its limit given as the top-level default is the same query.
    const top = await postPoints(sim, { limit: 10, items: [{ id: idOf(picked.longNumeric), start: 0, cursor }] }, AUTH);
    expect(top.status, top.text).toBe(200);
  });

  it('refuses an altered cursor and a cursor of a collection list', async () => {
    const cursor = await firstCursor({ id: idOf(picked.longNumeric), limit: 10 });
    const altered = `${cursor.slice(0, 10)}${cursor[10] === 'A' ? 'B' : 'A'}${cursor.slice(11)}`;
    const query = { id: idOf(picked.longNumeric), limit: 10 };
    expect(message(await postPoints(sim, { items: [{ ...query, cursor: altered }] }, AUTH))).toContain('Invalid cursor');
    const page = await send(`${sim.baseUrl}/timeseries?limit=1`, { headers: AUTH });
    const listCursor = page.json<{ nextCursor: string }>().nextCursor;
    expect(message(await postPoints(sim, { items: [{ ...query, cursor: listCursor }] }, AUTH))).toContain('does not match');
  });

  it('continues a query whose other queries changed: cursors are per query', async () => {
    const series = seriesOf(picked.longNumeric);
    const query = { id: idOf(picked.longNumeric), limit: 10 };
    const cursor = await firstCursor(query);
    const other = { id: idOf(picked.step), limit: 3 };
    const [, item] = await answerItems(sim, { items: [other, { ...query, cursor }] }, AUTH);
    expect(item?.datapoints).toEqual(expectedRawPoints(series, 0, clock.now()).slice(10, 20));
  });
});

describe('POST /timeseries/data/list: validation and routing', () => {
  it.each([
    [{}, "Invalid property 'items'"],
    [{ items: [{ id: 1 }], aggregate: 'max' }, "Unrecognized property 'aggregate'"],
    [{ items: [{ id: 1, start: 'last week' }] }, "Invalid property 'items[0].start'"],
    [{ items: [{ id: 1, aggregates: ['max'], granularity: '121s' }] }, "Invalid property 'items[0].granularity'"],
  ])('answers %j with a 400 naming the field', async (body, text) => {
    expect(message(await postPoints(sim, body, AUTH))).toContain(text);
  });

  it('asks for authentication, a JSON body and POST, as the other routes do', async () => {
    const body = JSON.stringify({ items: [{ id: idOf(picked.step) }] });
    const url = `${sim.baseUrl}/timeseries/data/list`;
    expect((await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    expect((await send(url, { method: 'POST', headers: { ...AUTH, 'content-type': 'text/plain' }, body })).status).toBe(415);
    expect((await send(url, { headers: AUTH })).status).toBe(405);
    const other = url.replace(`/projects/${sim.project}/`, '/projects/elsewhere/');
    expect((await send(other, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body })).status).toBe(403);
  });

  it('is counted under its route, its points under stats.datapoints', async () => {
    sim.resetStats();
    const items = [{ id: idOf(picked.longNumeric), limit: 7 }, { id: idOf(picked.step), limit: 5 }];
    await answerItems(sim, { items }, AUTH);
    const stats = sim.stats();
    expect(stats.byRoute).toEqual({ 'POST /timeseries/data/list': 1 });
    expect(stats.pages).toBe(1);
    expect(stats.datapoints).toBe(12);
    expect(stats.items).toBe(0);
  });
});
