import { describe, expect, it } from 'vitest';
import { ListedSeries, type SeriesLimit } from '../../src/export/kinds/datapoints/listed-series.js';
import { SERIES_READ_SLACK } from '../../src/export/partition/read-limit.js';
import { captureLogger } from '../support/log-capture.js';

/** The series a datapoints stream's partitions listed in one process: each taken once, and counted. */
const NO_LIMIT: SeriesLimit = { factor: 0, total: () => undefined };
const page = (m: number, number: number) => ({ m, number, request: `GET /timeseries, request id r-${m}-${number}` });
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

function ledger(limit = NO_LIMIT, counts = new Map<number, number>(), maxSlots?: number) {
  const log = captureLogger('warn');
  return { log, listed: new ListedSeries('points', 3, counts, limit, log.logger, maxSlots) };
}

describe('ListedSeries', () => {
  it('takes each series once, and counts what each partition listed, the checkpoint\'s counts included', () => {
    const { listed } = ledger(NO_LIMIT, new Map([[1, 40], [2, 7]]));
    listed.take(page(1, 1), range(1, 10));
    listed.take(page(2, 1), range(11, 10));
    listed.take(page(1, 2), range(21, 5));
    expect([listed.count(1), listed.count(2), listed.count(3)]).toEqual([55, 17, 0]);
    expect(listed.listed).toBe(72);
  });

  it('a series listed again by another partition: E_SERIES_REPEATED naming both places and the request; the other partitions stop', () => {
    const { listed } = ledger();
    listed.take(page(1, 1), range(1, 10));
    expect(() => listed.take(page(3, 4), [100, 5])).toThrow(
      'listed series 5 twice: first in partition 1/3, page 1, then again in partition 3/3, page 4 (GET /timeseries, request id r-3-4)',
    );
    expect(() => listed.check(2)).toThrow(expect.objectContaining({ code: 'E_SERIES_REPEATED' }));
    expect(() => listed.take(page(2, 1), [200])).toThrow('points partition 2/3 stops: the platform listed series 5 twice');
  });

  it('a series of the checkpoint listed again: refused, naming the checkpoint; the pieces of one series are one series', () => {
    const { listed } = ledger();
    listed.resume(2, [8, 8, 9]);
    listed.take(page(2, 1), [10, 11]);
    expect(() => listed.take(page(2, 2), [12, 9])).toThrow(
      'series 9 twice: first in partition 2/3, the checkpoint\'s series not done yet, then again in partition 2/3, page 2',
    );
  });

  it('a partition read again from its first page forgets what it listed, and its count', () => {
    const { listed } = ledger(NO_LIMIT, new Map([[1, 30]]));
    listed.resume(1, [1, 2]);
    listed.take(page(1, 1), [3, 4]);
    listed.take(page(2, 1), [5]);
    listed.restart(1);
    expect(listed.count(1)).toBe(0);
    listed.take(page(1, 1), [1, 2, 3, 4]);
    expect(() => listed.take(page(1, 2), [5])).toThrow(/series 5 twice: first in partition 2\/3, page 1/);
  });

  it('the series listed past maxReadFactor x the count (plus the slack): E_READ_LIMIT naming the partition', () => {
    const { listed } = ledger({ factor: 2, total: () => 100 }, new Map([[1, 2 * 100 + SERIES_READ_SLACK - 5]]));
    listed.take(page(2, 1), range(1, 5));
    expect(() => listed.take(page(3, 1), [6])).toThrow(
      expect.objectContaining({ code: 'E_READ_LIMIT', message: expect.stringMatching(/^points partition 3\/3: the stream's series listing has listed 1,201 series, more than 2 times the 100 series/) }),
    );
  });

  it('past its most slots: new series counted, not remembered, said once', () => {
    const { listed, log } = ledger(NO_LIMIT, new Map(), 1024);
    listed.take(page(1, 1), range(1, 768));
    listed.take(page(1, 2), range(769, 10));
    listed.take(page(2, 1), range(1000, 10));
    expect(listed.count(1) + listed.count(2)).toBe(788);
    expect(() => listed.take(page(3, 1), [5])).toThrow(/series 5 twice/);
    const said = log.records().filter((record) => /the most whose ids are kept/.test(String(record.msg)));
    expect(said).toHaveLength(1);
  });
});
