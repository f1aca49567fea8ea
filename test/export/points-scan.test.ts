import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AskedQuery } from '../../src/export/kinds/datapoints/points-answer.js';
import { type Aggregate, pointColumns, type PointsShape } from '../../src/resources/index.js';
import { PointTable } from '../../src/sink/datapoints/point-table.js';
import { PointList } from '../../src/sink/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { postPoints } from '../support/datapoints.js';
import { expectSameReads, type Read, readScanned, scannedSeries } from '../support/points-paths.js';

/**
 * The datapoints answer read from its bytes (export/kinds/datapoints/points-scan.ts) against the same answer
 * parsed (readAnswer), on the simulator's answers of every kind: the same series, points, Parquet
 * column values and NDJSON lines, and the bytes of the plain case taken without JSON.parse.
 * points-scan-cases.test.ts has the broken and odd answers, points-scan-property.test.ts random ones.
 */
const API_KEY = 'points-scan-test-key';
const END = Date.UTC(2030, 0, 1);
const FIVE: Aggregate[] = ['count', 'average', 'min', 'max', 'sum'];

let sim: Simulator;
/** Series indices: numeric ones, string ones, and numeric ones with bad points. */
const kinds = { numeric: [] as number[], strings: [] as number[], bad: [] as number[] };

beforeAll(async () => {
  sim = await startSimulator({ seed: 5, timeseries: 60, datapoints: 300_000, apiKeys: [API_KEY] });
  for (let index = 0; index < 60; index++) {
    const item = sim.dataset.timeseries.item(index);
    const points = sim.dataset.datapoints.series(index);
    if (points.count === 0) continue;
    if (item.isString) kinds.strings.push(index);
    else if (points.shape.badShare > 0.02) kinds.bad.push(index);
    else kinds.numeric.push(index);
  }
});

afterAll(async () => {
  await sim.close();
});

type Ask = { id: number } | { externalId: string };

/** The answer's bytes to `items` (each with its window and limit), and the queries as the export asked them. */
async function answer(items: (Ask & Record<string, unknown>)[], top: Record<string, unknown> = {}) {
  const reply = await postPoints(sim, { items, ignoreUnknownIds: true, ...top }, { 'api-key': API_KEY });
  expect(reply.status, reply.text).toBe(200);
  const queries: AskedQuery[] = items.map((item) => ({
    ref: typeof item.id === 'number' ? { id: item.id } : { externalId: item.externalId as string },
    start: item.start as number,
    end: item.end as number,
    limit: item.limit as number,
    last: null,
  }));
  return { body: Buffer.from(reply.text), queries };
}

function ask(index: number, extra: Record<string, unknown> = {}): Ask & Record<string, unknown> {
  return { id: sim.dataset.timeseries.idOf(index), start: 0, end: END, limit: 400, ...extra };
}

const RAW: PointsShape = { includeStatus: false };
const WITH_STATUS: PointsShape = { includeStatus: true };
const everyKind = () => [...kinds.numeric.slice(0, 6), ...kinds.strings.slice(0, 4), ...kinds.bad.slice(0, 4)];

/** The same answer with its whitespace changed: spaces between tokens, or indented (line breaks). */
function respaced(body: Buffer, how: 'spaces' | 'indented' | 'some items indented' | 'items on lines'): Buffer {
  const value = JSON.parse(body.toString('utf8')) as { items: unknown[] };
  if (how === 'items on lines') return Buffer.from(`{\n "items": [\n${value.items.map((item) => JSON.stringify(item)).join(',\r\n')}\n]\n}\n`);
  if (how === 'indented') return Buffer.from(JSON.stringify(value, null, 2));
  if (how === 'spaces') return Buffer.from(JSON.stringify(value, null, 1).replace(/\n */g, ' '));
  const items = value.items.map((item, i) => JSON.stringify(item, null, i % 2 === 0 ? 2 : undefined));
  return Buffer.from(`{ "items" : [ ${items.join(' ,\n')} ] }`);
}

function seriesCount(read: Read): number {
  expect(read).toHaveProperty('series');
  return 'series' in read ? read.series.length : 0;
}

describe('the datapoints answer read from its bytes', () => {
  it('gives what JSON.parse gives for raw points of numeric and string series, and takes every item itself', async () => {
    const { body, queries } = await answer(everyKind().map((index) => ask(index)));
    const read = await expectSameReads(body, queries, RAW);
    expect(seriesCount(read)).toBe(queries.length);
    expect(scannedSeries(read)).toBe(queries.length);
  });

  it('and for points with statuses and bad points: "NaN", "Infinity", "-Infinity", string points without a value', async () => {
    const flags = { includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: false };
    const { body, queries } = await answer(everyKind().map((index) => ask(index, { ...flags, limit: 2000 })));
    const text = body.toString();
    for (const special of ['"NaN"', '"Infinity"', '"-Infinity"', '"status":{"code"']) expect(text).toContain(special);
    const read = await expectSameReads(body, queries, WITH_STATUS);
    expect(scannedSeries(read)).toBe(queries.length);
    await expectSameReads(body, queries, RAW);
  });

  it('and for aggregates, a chain\'s repeated first bucket dropped as readAnswer drops it', async () => {
    const items = kinds.numeric.slice(0, 5).map((index) => ask(index, { aggregates: FIVE, granularity: '1d', limit: 50 }));
    const { body, queries } = await answer(items);
    const shape: PointsShape = { aggregates: FIVE, granularity: '1d', includeStatus: false };
    const read = await expectSameReads(body, queries, shape);
    expect(scannedSeries(read)).toBe(queries.length);
    // Started again by time: each chain's last bucket comes again first.
    const firsts = (JSON.parse(body.toString()) as { items: { datapoints: { timestamp: number }[] }[] }).items;
    const again = queries.map((query, i) => ({ ...query, last: firsts[i]?.datapoints[0]?.timestamp ?? null }));
    const dropped = await expectSameReads(body, again, shape);
    expect(scannedSeries(dropped)).toBe(queries.length);
    await expectSameReads(body, queries, { aggregates: ['count', 'sum'], granularity: '1d', includeStatus: false });
  });

  it('with cursors, series asked by externalId, and series the platform does not know', async () => {
    const named = kinds.numeric.flatMap((index) => sim.dataset.timeseries.item(index).externalId ?? []).slice(0, 3);
    expect(named).toHaveLength(3);
    const items = [
      ...named.map((externalId) => ({ externalId, start: 0, end: END, limit: 7 })),
      ask(kinds.strings[0] ?? 0, { limit: 3 }),
      { id: 123_456_789, start: 0, end: END, limit: 5 },
    ];
    const { body, queries } = await answer(items);
    const read = await expectSameReads(body, queries, RAW);
    expect(read).toMatchObject({ unknown: [queries.length - 1] });
    expect('series' in read && read.series.every(({ nextCursor }) => nextCursor !== undefined)).toBe(true);
  });

  it.each(['spaces', 'indented', 'some items indented', 'items on lines'] as const)(
    'gives the same with its whitespace changed (%s); an answer with a point on several lines is parsed',
    async (how) => {
      const flags = { includeStatus: true, ignoreBadDataPoints: false };
      const { body, queries } = await answer(everyKind().map((index) => ask(index, { ...flags, limit: 50 })));
      const read = await expectSameReads(respaced(body, how), queries, WITH_STATUS);
      const scanned = { 'spaces': queries.length, 'indented': 0, 'some items indented': 0, 'items on lines': queries.length };
      expect(scannedSeries(read)).toBe(scanned[how]);
    },
  );

  it('fills the Parquet columns from the points\' bytes, parsing none', async () => {
    const flags = { includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: false };
    const { body, queries } = await answer(everyKind().map((index) => ask(index, { ...flags, limit: 500 })));
    const read = readScanned(body, queries);
    expect(scannedSeries(read)).toBe(queries.length);
    const parse = vi.spyOn(PointList.prototype, 'value');
    try {
      const table = new PointTable(pointColumns(WITH_STATUS), WITH_STATUS);
      for (const series of 'series' in read ? read.series : []) table.add(series);
      expect(table.rows).toBeGreaterThan(1000);
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });
});
