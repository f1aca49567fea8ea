import type { Clock } from '../../util/clock.js';
import { hash3, Rng } from '../random.js';
import type { TimeseriesSet } from '../dataset/timeseries.js';
import { type Datapoint, GeneratedPoints } from './generated-points.js';
import { type DatapointChange, PointChurn } from './point-churn.js';
import { pointsOfRank, SeriesOrder } from './point-spread.js';
import type { ValueShape } from './point-values.js';
import { SeriesPoints } from './series-points.js';

/** Slot widths a series' points are spaced by (each point at a random offset inside its slot). */
const STEPS_MS = [1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 300_000, 900_000, 3_600_000];
const DAY_MS = 86_400_000;
/** No series spans more than this: a series too long for any step above gets a narrower one. */
const MAX_SPAN_MS = 6 * 365 * DAY_MS;
/** Typical magnitudes of a numeric series: fractions, percentages, pressures, flows, counters. */
const MAGNITUDES = [0.01, 1, 50, 1000, 250_000, 10_000_000];
/**
 * A few series are historical: stopped long ago, they run across 1970-01-01, so some of their
 * timestamps are negative, and a query's default start (0) leaves those out, as the platform's does.
 */
const HISTORICAL_SHARE = 0.02;
/** Of the other series with points, this share is live: their points reach now and keep arriving. */
const LIVE_SHARE = 0.7;
/** The others stopped (a decommissioned sensor) 1 day to 2 years before the simulator's start. */
const STOPPED_BEFORE_MS = { least: DAY_MS, most: 2 * 365 * DAY_MS };
/** Share of the series with statuses at all; in those, 0.5% to 5% of the points are not Good. */
const WITH_STATUS_SHARE = 0.3;
const SALT_SHAPE = 0xda7a;
const SALT_KEY = 0xda7b;

/**
 * The datapoints of every time series: `total` points at the simulator's start spread over the
 * series (point-spread.ts), each series' points generated on demand from (seed, start time)
 * (generated-points.ts), and what `--churn` changed since (point-churn.ts). Nothing is stored but
 * the changes, so millions of points cost no memory; a series' points follow its `isString` and
 * `isStep`. Every read applies the changes due by the clock's now first, and sees a live series'
 * points up to now.
 */
export class DatapointSet {
  private readonly rng = new Rng();
  private readonly order: SeriesOrder;
  /** The clock's now when the set was made: the time the layout of the series is drawn around. */
  readonly startMs: number;
  private readonly churn: PointChurn;

  constructor(
    private readonly seed: number,
    private readonly timeseries: TimeseriesSet,
    /** Points in all the series together at the start. */
    readonly total: number,
    private readonly clock: Pick<Clock, 'now'>,
    /** Changes a second to the points (`--churn`); 0 for none. */
    churnPerSecond = 0,
  ) {
    this.order = new SeriesOrder(timeseries.generated, seed);
    this.startMs = clock.now();
    const sized = total > 0 ? timeseries.generated : 0;
    this.churn = new PointChurn(seed, churnPerSecond, this.startMs, sized, (index) => this.generated(index));
  }

  /**
   * Points of the series at `index` at the start (0 outside the collection, and in a series inserted
   * since it was generated): they add up to `total`.
   */
  countOf(index: number): number {
    const series = this.timeseries.generated;
    if (!Number.isInteger(index) || index < 0 || index >= series) return 0;
    return pointsOfRank(this.order.rank(index), series, this.total);
  }

  /** The points of the time series at `index` of the timeseries collection, as they are now. */
  series(index: number): SeriesPoints {
    const now = this.clock.now();
    this.churn.catchUp(now);
    return new SeriesPoints(this.generated(index), this.churn.changesOf(index), now);
  }

  /**
   * Every change `--churn` made to the points so far, in the order applied. The points a live
   * series gains as time passes are not in it (see `arrivedBetween`). A subscription's feed of
   * "every change to series S since position P" (P a wall time) is both, merged by wall time: the
   * entries of S with `appliedAt` after P, and `arrivedBetween(S, P, now)`, each point at its
   * timestamp (a change never touches a time after its own, so the two never cross).
   */
  changes(): readonly DatapointChange[] {
    this.churn.catchUp(this.clock.now());
    return this.churn.log;
  }

  /**
   * The points of a live series that arrived in the wall time [fromMs, toMs), ascending, with the
   * values they arrived with (a change applied later is in the log). A point arrives at its
   * timestamp; those before the start were there from the start, and none arrives after now.
   */
  * arrivedBetween(index: number, fromMs: number, toMs: number): Generator<Datapoint, void, undefined> {
    const generated = this.generated(index);
    if (!generated.live) return;
    const limit = generated.countAt(Math.min(toMs, this.clock.now()));
    for (let k = generated.indexAtOrAfter(Math.max(fromMs, this.startMs), limit); k < limit; k++) {
      yield generated.point(k);
    }
  }

  private generated(index: number): GeneratedPoints {
    const { isString, isStep } = this.timeseries.item(index, false);
    const count = this.countOf(index);
    const rng = this.rng.reset(hash3(this.seed, index, SALT_SHAPE));
    const fitting = STEPS_MS.filter((step) => step * count <= MAX_SPAN_MS);
    // A series too long for any slot in the span gets the widest slot that keeps it in the span.
    const step = fitting.length > 0 ? rng.pick(fitting) : Math.max(1, Math.floor(MAX_SPAN_MS / count));
    const span = count * step;
    const historical = rng.chance(HISTORICAL_SHARE);
    const live = count > 0 && !historical && rng.chance(LIVE_SHARE);
    const stoppedBefore = STOPPED_BEFORE_MS.least + rng.int(STOPPED_BEFORE_MS.most - STOPPED_BEFORE_MS.least);
    // A live series' last slot before the start ends at the start: its next point comes at or after it.
    const end = live ? this.startMs : this.startMs - stoppedBefore;
    const first = historical ? -1 - Math.floor(rng.next() * span) : end - span;
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
    return new GeneratedPoints(count, first, step, shape, live);
  }
}
