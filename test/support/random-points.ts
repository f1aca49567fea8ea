import { pointColumns, type PointsShape } from '../../src/resources/index.js';
import { PointTable } from '../../src/sink/datapoints/point-table.js';
import { type PointBatch, PointList, type PointValue, type SeriesPoints } from '../../src/sink/index.js';
import { seededRandom } from './seeded-random.js';

/**
 * Seeded random answers of many series for the datapoints writers, as the export hands them over:
 * batches of up to 100 series each, every series' points in time order across batches, series
 * interleaved, and one long series read as several time windows whose points arrive interleaved.
 * Raw points carry numbers, -0, "NaN" / "Infinity" / "-Infinity", missing values, statuses (with
 * and without a symbol) and fields outside the columns (`extra`); string series carry unicode and
 * empty strings; aggregates carry counts and averages, some missing.
 */

export type PointsKind = 'raw' | 'aggregates';

export const RAW_WITH_STATUS: PointsShape = { includeStatus: true };
export const AGGREGATES: PointsShape = { aggregates: ['count', 'average'], granularity: '1h', includeStatus: false };

export interface RandomPoints {
  seed: number;
  /** Series besides the windowed one. */
  series: number;
  /** Points in all, about (the last batch may pass it). */
  points: number;
  kind: PointsKind;
  /** Time windows of the long series (0: none). */
  windows?: number;
  /** Share of the series that are string series (raw only). */
  strings?: number;
}

const TEXTS = ['on', 'off', '', 'Ünïcödé ✓', 'emoji 😀 and 中文', 'quote " and \\ backslash', 'line\nbreak', `long ${'ß'.repeat(40)}`];

function rawPoint(random: () => number, timestamp: number, isString: boolean): PointValue {
  const point: Record<string, unknown> = { timestamp };
  const r = random();
  if (isString) {
    if (r < 0.9) point.value = `${TEXTS[Math.floor(random() * TEXTS.length)]!}#${Math.floor(random() * 1000)}`;
  } else if (r < 0.03) {
    point.value = ['NaN', 'Infinity', '-Infinity'][Math.floor(r * 100)];
  } else if (r < 0.05) {
    point.value = -0;
  } else if (r < 0.95) {
    point.value = (random() - 0.5) * 10 ** Math.floor(random() * 12 - 4);
  }
  const s = random();
  if (s < 0.05) point.status = { code: 2147483648, symbol: 'Bad' };
  else if (s < 0.08) point.status = { code: 1073741824, symbol: 'Uncertain' };
  else if (s < 0.09) point.status = { code: 1073741825 };
  if (random() < 0.03) point.quality = { source: 'Ω', n: Math.floor(random() * 10) };
  return point as PointValue;
}

function aggregatePoint(random: () => number, timestamp: number): PointValue {
  const point: Record<string, unknown> = { timestamp };
  if (random() < 0.95) point.count = Math.floor(random() * 2 ** 40);
  if (random() < 0.9) point.average = (random() - 0.5) * 1e6;
  if (random() < 0.02) point.interpolation = random();
  return point as PointValue;
}

/** The batches of `options`, seeded: the same options give the same batches. */
export function randomBatches(options: RandomPoints): PointBatch[] {
  const random = seededRandom(options.seed);
  const windows = options.windows ?? 0;
  const step = options.kind === 'aggregates' ? 3_600_000 : 1;
  // Ids at random (not in the order series first come), some series without an externalId.
  const series = Array.from({ length: options.series + (windows > 0 ? 1 : 0) }, (_, i) => ({
    id: 1 + Math.floor(random() * 2 ** 52),
    externalId: i % 9 === 4 ? undefined : `ts-${i}-ü-😀`,
    isString: options.kind === 'raw' && random() < (options.strings ?? 0.2),
    // Each window of the windowed series (the last) has its own next time; the others one.
    next: i === options.series
      ? Array.from({ length: windows }, (_, w) => w * 1e11 - 3e11)
      : [Math.floor((random() - 0.3) * 1e6) * step],
  }));
  const batches: PointBatch[] = [];
  for (let total = 0; total < options.points;) {
    const batch: SeriesPoints[] = [];
    const asked = 1 + Math.floor(random() * 100);
    for (let q = 0; q < asked && total < options.points; q++) {
      // The windowed series (the last) comes often, so that its windows interleave within a run too.
      const one = series[windows > 0 && random() < 0.1 ? options.series : Math.floor(random() * series.length)]!;
      const window = Math.floor(random() * one.next.length);
      const count = 1 + Math.floor(random() * (random() < 0.1 ? 300 : 20));
      const points: PointValue[] = [];
      for (let k = 0; k < count; k++) {
        const timestamp = (one.next[window]! += step * (1 + Math.floor(random() * 5)));
        points.push(options.kind === 'raw' ? rawPoint(random, timestamp, one.isString) : aggregatePoint(random, timestamp));
      }
      total += count;
      batch.push({ id: one.id, externalId: one.externalId, isString: one.isString, points: PointList.of(points) });
    }
    batches.push(batch);
  }
  return batches;
}

/** A row as the writers must hold it: the series, the time and each value column by name. */
export type PointRow = Record<string, unknown>;

/**
 * The rows of `batches` sorted by series id, then time, by a plain sort here: the values taken
 * point by point by one PointTable holding them all, in the order they came.
 */
export function sortedRows(batches: readonly PointBatch[], shape: PointsShape): PointRow[] {
  const total = batches.reduce((sum, batch) => sum + batch.reduce((n, series) => n + series.points.length, 0), 0);
  // Room for every row, and for 64 bytes of text a row.
  const table = new PointTable(pointColumns(shape), shape, 4 * total + 1024);
  for (const batch of batches) {
    for (const series of batch) if (table.add(series) !== series.points.length) throw new Error('the table is full');
  }
  const rows = Array.from({ length: table.rows }, (_, row) => ({
    timeseriesId: table.seriesId(row),
    externalId: table.externalId(row) ?? null,
    timestamp: table.timestamp(row),
    ...Object.fromEntries(table.valueColumns.map((spec, c) => [spec.name, table.value(c, row)])),
  }));
  return rows.sort((a, b) => a.timeseriesId - b.timeseriesId || a.timestamp - b.timestamp);
}

/** Numbers as text that tells -0, NaN and the infinities apart, so that rows compare with toEqual. */
export function comparable(rows: readonly PointRow[]): Record<string, unknown>[] {
  return rows.map((row) =>
    Object.fromEntries(Object.entries(row).map(([name, value]) => [name, typeof value === 'number' ? (Object.is(value, -0) ? '-0' : String(value)) : value])),
  );
}
