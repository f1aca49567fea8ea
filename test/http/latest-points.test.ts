import { describe, expect, it } from 'vitest';
import { BadResponseError } from '../../src/http/errors.js';
import type { JsonResponse } from '../../src/http/interpret-response.js';
import { latestPoints, parseLatestPoints } from '../../src/http/latest-points.js';

/** The answer of POST /timeseries/data/latest, read and checked; the request, as the platform takes it. */

const response = (body: unknown): JsonResponse => ({
  body,
  bytes: Buffer.from(JSON.stringify(body)),
  path: '/api/v1/projects/p/timeseries/data/latest',
  requestId: 'req-1',
  attempts: 1,
});

describe('parseLatestPoints', () => {
  it('reads each series\' identity and its point\'s time, or none', () => {
    const node = { space: 'sp', externalId: 'n1' };
    const body = {
      items: [
        { id: 1, externalId: 'a', isString: false, datapoints: [{ timestamp: 5, value: 1 }] },
        { id: 2, instanceId: node, isString: false, datapoints: [] },
      ],
    };
    expect(parseLatestPoints(response(body))).toEqual([
      { id: 1, externalId: 'a', timestamp: 5 },
      { id: 2, instanceId: node, timestamp: undefined },
    ]);
  });

  it.each([
    [{}, "no array 'items'"],
    [{ items: [{ datapoints: [] }] }, "no integer 'id' in items[0]"],
    [{ items: [{ id: 1 }] }, "no 'datapoints' of 0 or 1 point in items[0]"],
    [{ items: [{ id: 1, datapoints: [{ timestamp: 1 }, { timestamp: 2 }] }] }, "no 'datapoints' of 0 or 1 point"],
    [{ items: [{ id: 1, datapoints: [{ timestamp: '1' }] }] }, "a point without an integer 'timestamp' in items[0]"],
  ])('refuses %j: %s, naming the request', (body, what) => {
    const error = (() => {
      try {
        parseLatestPoints(response(body));
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(BadResponseError);
    expect((error as Error).message).toContain(what);
    expect((error as BadResponseError).requestId).toBe('req-1');
  });
});

describe('latestPoints', () => {
  it('asks for each series before the time, with the flags given and unknown ids ignored', async () => {
    const sent: unknown[] = [];
    const client = {
      post: (path: string, body: Readonly<Record<string, unknown>>) => {
        sent.push({ path, body });
        return Promise.resolve(response({ items: [] }));
      },
    };
    await latestPoints(client, { series: [{ id: 7 }, { externalId: 'x' }], before: 99, flags: { ignoreBadDataPoints: false } });
    expect(sent).toEqual([{
      path: '/timeseries/data/latest',
      body: {
        items: [{ id: 7, before: 99, ignoreBadDataPoints: false }, { externalId: 'x', before: 99, ignoreBadDataPoints: false }],
        ignoreUnknownIds: true,
      },
    }]);
  });

  it('asks for 1..100 series', async () => {
    const client = { post: () => Promise.reject(new Error('not asked')) };
    await expect(latestPoints(client, { series: [], before: 1 })).rejects.toThrow(RangeError);
    const many = Array.from({ length: 101 }, (_, id) => ({ id: id + 1 }));
    await expect(latestPoints(client, { series: many, before: 1 })).rejects.toThrow(RangeError);
  });
});
