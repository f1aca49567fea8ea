import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PointList } from '../../src/sink/index.js';
import type { SeriesAnswer } from '../../src/export/kinds/datapoints/points-answer.js';
import {
  MAX_AGGREGATES,
  MAX_PIECES,
  MAX_QUERIES,
  MAX_RAW_POINTS,
  type PlannedQuery,
  SeriesTasks,
} from '../../src/export/kinds/datapoints/series-tasks.js';

const WINDOW = { start: 0, end: 1_000_000_000, aggregates: false };

/** An answer to a planned query: `count` points `step` apart after its last one, with a cursor unless `last`. */
function answer({ task, query }: PlannedQuery, count: number, step: number, last = false): SeriesAnswer {
  const from = (query.last ?? query.start - 1) + step;
  const points = Array.from({ length: count }, (_, k) => ({ timestamp: from + k * step }));
  const id = 'id' in task.ref ? task.ref.id : 0;
  return { query: 0, id, externalId: undefined, isString: false, nextCursor: last ? undefined : `c${from}`, points: PointList.of(points) };
}

const sum = (queries: readonly PlannedQuery[]) => queries.reduce((total, { query }) => total + query.limit, 0);

describe('SeriesTasks: packing series into requests', () => {
  it('packs up to 100 series with their limits adding up to 100,000; the rest wait', () => {
    const tasks = new SeriesTasks(WINDOW);
    for (let id = 1; id <= 250; id++) tasks.add({ id }, null);
    const first = tasks.nextQueries();
    expect(first).toHaveLength(MAX_QUERIES);
    expect(sum(first)).toBeLessThanOrEqual(MAX_RAW_POINTS);
    const fresh = ({ query }: PlannedQuery) => query.limit === 1000 && query.start === 0 && query.cursor === undefined;
    expect(first.every(fresh)).toBe(true);
    // A second request in flight takes the next 100, never one the first holds.
    const second = tasks.nextQueries();
    expect(second.map(({ task }) => task.ref)).toEqual(Array.from({ length: 100 }, (_, i) => ({ id: 101 + i })));
  });

  it('a chain keeps its limit and goes on with its cursor; a finished series makes room for a waiting one', () => {
    const tasks = new SeriesTasks(WINDOW);
    for (let id = 1; id <= 101; id++) tasks.add({ id }, null);
    const first = tasks.nextQueries();
    first.forEach((planned, i) => tasks.answered(planned.task, answer(planned, planned.query.limit, 10, i === 0)));
    const next = tasks.nextQueries();
    expect(next).toHaveLength(MAX_QUERIES);
    expect(sum(next)).toBeLessThanOrEqual(MAX_RAW_POINTS);
    const going = next.filter(({ query }) => query.cursor !== undefined);
    expect(going).toHaveLength(99);
    expect(going.every(({ query }) => query.limit === 1000)).toBe(true);
    expect(next.find(({ task }) => 'id' in task.ref && task.ref.id === 101)?.query.cursor).toBeUndefined();
  });

  it('when few series are left, their chains start again by time after their last point with an even share', () => {
    const tasks = new SeriesTasks(WINDOW);
    for (let id = 1; id <= 100; id++) tasks.add({ id }, null);
    const first = tasks.nextQueries();
    first.forEach((planned, i) => tasks.answered(planned.task, answer(planned, planned.query.limit, 1000, i >= 2)));
    const next = tasks.nextQueries();
    expect(next).toHaveLength(2);
    for (const { query } of next) {
      expect(query.cursor).toBeUndefined();
      expect(query.limit).toBe(MAX_RAW_POINTS / 2);
      expect(query.start).toBe((query.last ?? 0) + 1);
    }
  });

  it('aggregates are packed to 10,000 in all, and never split', () => {
    const tasks = new SeriesTasks({ ...WINDOW, aggregates: true });
    tasks.add({ id: 1 }, null);
    const [only] = tasks.nextQueries();
    expect(only!.query.limit).toBe(MAX_AGGREGATES);
    tasks.answered(only!.task, answer(only!, MAX_AGGREGATES, 1));
    expect(tasks.tasks).toHaveLength(1);
  });

  it('resumes a series after its last committed point; a series whose window is read to its end is finished', () => {
    const tasks = new SeriesTasks({ start: 0, end: 100, aggregates: false });
    tasks.add({ id: 1 }, 41);
    tasks.add({ id: 2 }, 99);
    const queries = tasks.nextQueries();
    expect(queries.map(({ query }) => [query.start, query.end])).toEqual([[42, 100]]);
    expect(tasks.open).toBe(1);
  });
});

describe('SeriesTasks: a long series is split into windows of time', () => {
  it('one series far from its end, alone, becomes up to 8 disjoint windows covering the rest of its window', () => {
    const tasks = new SeriesTasks(WINDOW);
    tasks.add({ id: 7 }, null);
    const [planned] = tasks.nextQueries();
    // 100,000 points 1 ms apart: a billion milliseconds hold about 10,000 requests more.
    tasks.answered(planned!.task, answer(planned!, MAX_RAW_POINTS, 1));
    expect(tasks.tasks).toHaveLength(MAX_PIECES);
    const windows = tasks.tasks.map((task) => [task.start, task.end] as const).sort((a, b) => a[1] - b[1]);
    const lastAnswered = MAX_RAW_POINTS - 1;
    // The first window goes on after the last point answered; together they cover the rest, without overlap.
    expect(windows[0]![1]).toBeGreaterThan(lastAnswered);
    for (let i = 1; i < windows.length; i++) expect(windows[i]![0]).toBe(windows[i - 1]![1]);
    expect(windows.at(-1)![1]).toBe(WINDOW.end);
    // Spread over 4 requests in flight: the windows go in parallel, one or two a request.
    const requests = [4, 3, 2, 1].map((spread) => tasks.nextQueries(spread));
    expect(requests.map((queries) => queries.length)).toEqual([1, 3, 2, 2]);
    for (const queries of requests) expect(sum(queries)).toBeLessThanOrEqual(MAX_RAW_POINTS);
    const going = { task: planned!.task, query: { start: lastAnswered + 1, cursor: undefined } };
    expect(requests[0]![0]).toMatchObject(going);
    expect(tasks.askable).toBe(false);
  });

  it('a series read in windows counts as one series ended, once, when its last window ends', () => {
    const tasks = new SeriesTasks(WINDOW);
    tasks.add({ id: 7 }, null);
    tasks.add({ id: 8 }, null);
    const first = tasks.nextQueries();
    const seven = first.find(({ task }) => 'id' in task.ref && task.ref.id === 7)!;
    const eight = first.find(({ task }) => 'id' in task.ref && task.ref.id === 8)!;
    tasks.answered(seven.task, answer(seven, MAX_RAW_POINTS / 2, 1));
    tasks.answered(eight.task, answer(eight, 10, 1, true));
    expect(tasks.seriesEnded(first.map(({ task }) => task)), 'series 8 ended; 7 goes on').toBe(1);
    const windows = () => tasks.tasks.filter((task) => !task.finished && 'id' in task.ref && task.ref.id === 7);
    expect(windows().length, 'series 7 is read in windows').toBeGreaterThan(1);
    // Every window of 7 but one ends: 7 is not ended yet; then the last one ends it.
    let counted = 0;
    while (windows().length > 0) {
      const queries = tasks.nextQueries();
      const [one] = queries;
      tasks.answered(one!.task, answer(one!, 1, 1, true));
      for (const other of queries.slice(1)) tasks.answered(other.task, answer(other, 1, 1));
      const ended = tasks.seriesEnded(queries.map(({ task }) => task));
      expect(ended, 'a series ends only with its last window').toBe(windows().length === 0 ? 1 : 0);
      counted += ended;
      tasks.forgetFinished();
    }
    expect(counted).toBe(1);
  });

  it('a series near its end, or one of many, is not split', () => {
    const near = new SeriesTasks({ start: 0, end: 250_000, aggregates: false });
    near.add({ id: 1 }, null);
    const [planned] = near.nextQueries();
    near.answered(planned!.task, answer(planned!, MAX_RAW_POINTS, 1));
    expect(near.tasks).toHaveLength(1);
    const many = new SeriesTasks(WINDOW);
    for (let id = 1; id <= 150; id++) many.add({ id }, null);
    for (const each of many.nextQueries()) many.answered(each.task, answer(each, each.query.limit, 1));
    expect(many.tasks).toHaveLength(150);
  });

  it('property: whatever the answers, no request asks for more than 100 queries or 100,000 points, nor a task twice at once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()), {
          maxLength: 60,
        }),
        (series, steps) => {
          const tasks = new SeriesTasks(WINDOW);
          for (let id = 1; id <= series; id++) tasks.add({ id }, null);
          const inFlight: PlannedQuery[][] = [];
          for (const [lanes, fill, ends] of steps) {
            while (inFlight.length <= lanes && tasks.askable) {
              const queries = tasks.nextQueries();
              expect(queries.length).toBeLessThanOrEqual(MAX_QUERIES);
              expect(sum(queries)).toBeLessThanOrEqual(MAX_RAW_POINTS);
              const held = new Set(inFlight.flat().map(({ task }) => task));
              expect(queries.some(({ task }) => held.has(task))).toBe(false);
              inFlight.push(queries);
            }
            const done = inFlight.shift() ?? [];
            for (const planned of done) {
              tasks.answered(planned.task, answer(planned, Math.floor(planned.query.limit * fill), 3, ends));
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
