import { describe, expect, it } from 'vitest';
import { PointRowCheck } from '../../src/export/check/point-rows.js';
import type { ManifestFile } from '../../src/export/state/manifest.js';
import type { StreamState } from '../../src/export/state/checkpoint.js';

/** PointRowCheck on its own: the bounds of a datapoints run's window; the series in flight against the rows read. */
const START = Date.UTC(2024, 0, 10, 10, 20, 30, 500);
const END = Date.UTC(2024, 2, 1);
const WINDOW = { start: START, end: END };

function shard(m: number, seq: number, format: 'parquet' | 'ndjson' = 'parquet'): ManifestFile {
  const ext = format === 'parquet' ? 'parquet' : 'ndjson';
  return { path: `points/part=${m}-of-2/${String(seq).padStart(6, '0')}.${ext}`, stream: 'points', m, n: 2, seq, format, rows: 0, bytes: 0, sha256: '0'.repeat(64) };
}

/** The problems of a check that read `times` (series 7) from one shard; a time zone after the granularity's space. */
function outside(granularity: string | undefined, times: readonly unknown[]): string[] {
  const [unit, timeZone] = granularity?.split(' ') ?? [];
  const check = new PointRowCheck('points', WINDOW, unit === undefined ? undefined : { granularity: unit, timeZone }, undefined);
  const row = check.reader(shard(1, 0));
  for (const time of times) row(7n, 'x7', time);
  return check.problems();
}

describe('PointRowCheck: a row\'s time against the run\'s window', () => {
  it.each([
    ['raw points: [start, end)', undefined, [START, END - 1], [START - 1, END]],
    ['1s buckets: from the one that holds start', '1s', [START - 999, END - 1], [START - 1000, END]],
    ['1m buckets', '1m', [START - 59_999], [START - 60_000]],
    ['15m buckets: the first bucket is aligned to a whole minute, not to 15', '15m', [START - 59_999], [START - 60_000]],
    ['2h buckets: to a whole hour', '2h', [START - 3_599_999], [START - 3_600_000]],
    ['2h buckets at a fixed offset: the offset changes nothing', '2h UTC+05:30', [START - 3_599_999], [START - 3_600_000]],
    ['1d buckets: a day', '1d', [START - 86_400_000 + 1], [START - 86_400_000]],
    ['1d buckets in a named time zone: a day and the widest change of its offset, 26 h', '1d Europe/Oslo', [START - 50 * 3_600_000 + 1], [START - 50 * 3_600_000]],
    ['1mo buckets: 31 days', '1mo', [START - 31 * 86_400_000 + 1], [START - 31 * 86_400_000]],
  ] as const)('%s', (_, granularity, inside, out) => {
    expect(outside(granularity, inside)).toEqual([]);
    for (const time of out) {
      const [problem] = outside(granularity, [...inside, time]);
      expect(problem).toMatch(new RegExp(`^points/part=1-of-2/000000\\.parquet: row ${inside.length + 1} \\(series 7, `));
      expect(problem).toMatch(time < START ? / lies before / : / lies at or after the window's end: /);
    }
  });

  it('names the first row outside and how many are; a row without a time is outside', () => {
    const [problem] = outside(undefined, [START, START - 5, 'x', END + 7]);
    expect(problem).toBe(
      `points/part=1-of-2/000000.parquet: row 2 (series 7, ${new Date(START - 5).toISOString()} (${START - 5})) lies before the window's start: points reads [${new Date(START).toISOString()} (${START}), ${new Date(END).toISOString()} (${END})) (the manifest's pointWindow); 3 rows of the shard lie outside it`,
    );
    expect(outside(undefined, ['x'])[0]).toContain('row 1 (series 7) has no timestamp ("x")');
  });
});

describe('PointRowCheck: each series in flight against its partition\'s shards', () => {
  type Series = {
    id?: number;
    externalId?: string;
    instanceId?: { space: string; externalId: string };
    after: number | null;
    start?: number;
    end?: number;
  };
  const state = (series: Series[]): StreamState => ({
    resource: 'datapoints',
    mode: 'full',
    params: [],
    window: { from: START, until: END },
    run: null,
    watermark: null,
    partitions: 2,
    formats: ['parquet', 'ndjson'],
    parts: {
      1: { cursor: null, nextSeq: 2, rows: 10, done: false, updatedAt: '', points: { listing: null, listed: true, series, listedSeries: series.length, unknown: [] } },
      2: { cursor: null, nextSeq: 0, rows: 0, done: false, updatedAt: '' },
    },
  });

  it('the latest time of each in the shards the checkpoint counts, per format, must be its after', () => {
    const check = new PointRowCheck('points', WINDOW, undefined, state([
      { id: 7, after: START + 20 },
      { id: 8, after: null },
      { externalId: 'nine', after: START + 3 },
      { id: 10, after: START + 5, start: START, end: START + 100 },
      { id: 10, after: null, start: START + 100, end: END },
    ]));
    for (const format of ['parquet', 'ndjson'] as const) {
      const first = check.reader(shard(1, 0, format));
      first(7, 'seven', START + 10);
      first(9, 'nine', START + 3);
      first(10, undefined, START + 5);
      const second = check.reader(shard(1, 1, format));
      second(7, 'seven', START + 20);
      // The manifest one shard ahead of the checkpoint (a crash between the two writes): not counted.
      check.reader(shard(1, 2, format))(7, 'seven', START + 30);
    }
    expect(check.problems()).toEqual([]);
  });

  it('a series the checkpoint holds by instanceId is not checked (rows name no instanceId): no false problem', () => {
    const check = new PointRowCheck('points', WINDOW, undefined, state([
      { id: 7, after: START + 20 },
      { instanceId: { space: 'sp', externalId: 'a' }, after: START + 3 },
      { instanceId: { space: 'sp', externalId: 'b' }, after: START + 9 },
    ]));
    const row = check.reader(shard(1, 0));
    row(7, 'seven', START + 20);
    row(11, 'eleven', START + 3);
    row(12, 'twelve', START + 9);
    expect(check.problems()).toEqual([]);
  });

  it('with the rows carrying node keys (instanceColumns), a series held by instanceId is matched by them, per format', () => {
    const check = new PointRowCheck('points', WINDOW, undefined, state([
      { instanceId: { space: 'sp', externalId: 'a' }, after: START + 3 },
      { instanceId: { space: 'sp', externalId: 'b' }, after: START + 9 },
      { instanceId: { space: 'sp', externalId: 'c' }, after: null },
    ]), true);
    for (const format of ['parquet', 'ndjson'] as const) {
      const row = check.reader(shard(1, 0, format));
      row(11, 'eleven', START + 3, 'sp', 'a');
      row(12, null, START + 5, 'sp', 'b');
      // Another space, the same externalId: another node.
      row(13, null, START + 9, 'other', 'b');
    }
    const at = (time: number) => `${new Date(time).toISOString()} (${time})`;
    const b = 'instanceId {"space":"sp","externalId":"b"}';
    expect(check.problems()).toEqual(['parquet', 'ndjson'].map((format) =>
      `points partition 1/2 (${format}): the checkpoint has series ${b} in flight with its points committed up to ${at(START + 9)}, but the partition's shards hold points up to ${at(START + 5)}: a resume would lose or repeat points`));
  });

  it('a series whose latest time is another, or with points although none are committed, or a piece with points past it: one line each', () => {
    const check = new PointRowCheck('points', WINDOW, undefined, state([
      { id: 7, after: START + 20 },
      { id: 8, after: null },
      { id: 10, after: START + 5, start: START, end: START + 100 },
    ]));
    const row = check.reader(shard(1, 0));
    row(7, undefined, START + 10);
    row(8, undefined, START + 1);
    row(10, undefined, START + 50);
    row(10, undefined, START + 200);
    const at = (time: number) => `${new Date(time).toISOString()} (${time})`;
    expect(check.problems()).toEqual([
      `points partition 1/2 (parquet): the checkpoint has series id 7 in flight with its points committed up to ${at(START + 20)}, but the partition's shards hold points up to ${at(START + 10)}: a resume would lose or repeat points`,
      `points partition 1/2 (parquet): the checkpoint has series id 8 in flight with none of its points committed, but the partition's shards hold points up to ${at(START + 1)}: a resume would lose or repeat points`,
      `points partition 1/2 (parquet): the checkpoint has series id 10 (its window [${at(START)}, ${at(START + 100)})) in flight with its points committed up to ${at(START + 5)}, but the partition's shards hold points up to ${at(START + 50)}: a resume would lose or repeat points`,
    ]);
  });
});
