import { hash3, Rng } from '../random.js';
import { pointsOfRank, SeriesOrder } from './point-spread.js';
import type { ValueShape } from './point-values.js';
import { SeriesPoints } from './series-points.js';
import { TIME_BASE_MS, TIME_SPAN_MS } from '../dataset/shared.js';
import type { TimeseriesSet } from '../dataset/timeseries.js';

/** Slot widths a series' points are spaced by (each point at a random offset inside its slot). */
const STEPS_MS = [1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 300_000, 900_000, 3_600_000];
/** Typical magnitudes of a numeric series: fractions, percentages, pressures, flows, counters. */
const MAGNITUDES = [0.01, 1, 50, 1000, 250_000, 10_000_000];
/**
 * A few series are historical: they run across 1970-01-01, so some of their timestamps are
 * negative, and a query's default start (0) leaves those out, as the platform's does.
 */
const HISTORICAL_SHARE = 0.02;
/** Share of the series with statuses at all; in those, 0.5% to 5% of the points are not Good. */
const WITH_STATUS_SHARE = 0.3;
const SALT_SHAPE = 0xda7a;
const SALT_KEY = 0xda7b;

/**
 * The datapoints of every time series: `total` points spread over the series (point-spread.ts),
 * each series' points generated on demand from the seed (series-points.ts). Nothing is stored, so
 * millions of points cost no memory; a series' points follow its `isString` and `isStep`.
 */
export class DatapointSet {
  private readonly rng = new Rng();
  private readonly order: SeriesOrder;

  constructor(
    private readonly seed: number,
    private readonly timeseries: TimeseriesSet,
    /** Points in all the series together. */
    readonly total: number,
  ) {
    this.order = new SeriesOrder(timeseries.generated, seed);
  }

  /** Points of the series at `index` (0 outside the collection, and in a series inserted since it was generated). */
  countOf(index: number): number {
    const series = this.timeseries.generated;
    if (!Number.isInteger(index) || index < 0 || index >= series) return 0;
    return pointsOfRank(this.order.rank(index), series, this.total);
  }

  /** The points of the time series at `index` of the timeseries collection. */
  series(index: number): SeriesPoints {
    const { isString, isStep } = this.timeseries.item(index, false);
    const count = this.countOf(index);
    const rng = this.rng.reset(hash3(this.seed, index, SALT_SHAPE));
    const fitting = STEPS_MS.filter((step) => step * count <= TIME_SPAN_MS);
    // A series too long for any slot in the span gets the widest slot that keeps it in the span.
    const step = fitting.length > 0 ? rng.pick(fitting) : Math.max(1, Math.floor(TIME_SPAN_MS / count));
    const span = count * step;
    const first = rng.chance(HISTORICAL_SHARE)
      ? -1 - Math.floor(rng.next() * span)
      : TIME_BASE_MS + Math.floor(rng.next() * Math.max(0, TIME_SPAN_MS - span));
    const magnitude = rng.pick(MAGNITUDES);
    const decimals = Math.min(8, Math.max(0, 5 - Math.floor(Math.log10(magnitude))));
    const shape: ValueShape = {
      key: hash3(this.seed, index, SALT_KEY),
      isString,
      isStep,
      badShare: rng.chance(WITH_STATUS_SHARE) ? 0.005 + 0.045 * rng.next() : 0,
      level: magnitude * (rng.next() * 2 - 0.5),
      amplitude: magnitude * (0.05 + 0.5 * rng.next()),
      period: 20 + rng.int(2000),
      phase: rng.next() * 2 * Math.PI,
      resolution: 10 ** decimals,
      runLength: 1 + rng.int(200),
    };
    return new SeriesPoints(count, first, step, shape);
  }
}
