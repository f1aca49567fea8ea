import { ChangeSchedule } from '../change-schedule.js';
import type { Rng } from '../random.js';
import type { Datapoint, GeneratedPoints } from './generated-points.js';
import { statusOf, valueOf, type ValueShape } from './point-values.js';
import { type DeletedRange, SeriesChanges } from './series-changes.js';
import { type SeriesPoint, SeriesPoints } from './series-points.js';

/**
 * One change `--churn` made to the points of a series, in the order applied: points written
 * (`upserts`: late points where there was none, or new values and statuses of existing ones) or a
 * range deleted. What a subscription's feed serves as `upserts` and `deletes`.
 */
export type DatapointChange = {
  /** The series' index in the timeseries collection. */
  series: number;
  /** The wall time (epoch ms) the change was applied: when it was due. */
  appliedAt: number;
} & ({ upserts: Datapoint[] } | { delete: DeletedRange });

const SALT = 0xda7c;
/** The mix of the changes: late points half of them, corrections 30%, deleted ranges the rest. */
const LATE_SHARE = 0.5;
const CORRECTED_SHARE = 0.3;
/** Most changes land among a series' last points (buffered data, a fix of the latest), the rest anywhere. */
const RECENT_SHARE = 0.7;
const RECENT_POINTS = 1000;
/** Points written by one change (late or corrected), and deleted by one at most. */
const MAX_WRITTEN = 5;
const MAX_DELETED = 100;
/** Draws of a series before a change gives up (an empty series takes none). */
const SERIES_TRIES = 8;

/**
 * Changes the points of the series while the simulator runs (`--churn RATE`, RATE changes a
 * second beside the collections' and the instances'), on a ChangeSchedule: each change draws a
 * series with points, then one of its points (among its last 1,000 mostly), then what happens
 * there. Kept per series in a SeriesChanges (memory follows the changes), and in a log in the
 * order applied. Every reader of the points applies the changes due by its now first.
 */
export class PointChurn {
  private readonly schedule: ChangeSchedule;
  private readonly changed = new Map<number, SeriesChanges>();
  private readonly applied: DatapointChange[] = [];

  constructor(
    seed: number,
    ratePerSecond: number,
    startMs: number,
    /** Series that may hold points (indexes 0..seriesCount-1). */
    private readonly seriesCount: number,
    private readonly generatedOf: (index: number) => GeneratedPoints,
  ) {
    this.schedule = new ChangeSchedule(seed, SALT, ratePerSecond, startMs, (due, rng) => this.apply(due, rng));
  }

  /** Applies the changes due at or before `nowMs`. */
  catchUp(nowMs: number): void {
    this.schedule.catchUp(nowMs);
  }

  /** What changed in the series at `index` so far; undefined when nothing did. */
  changesOf(index: number): SeriesChanges | undefined {
    return this.changed.get(index);
  }

  /** Every change so far, in the order applied. */
  get log(): readonly DatapointChange[] {
    return this.applied;
  }

  private apply(due: number, rng: Rng): void {
    if (this.seriesCount === 0) return;
    for (let tries = 0; tries < SERIES_TRIES; tries++) {
      const index = rng.int(this.seriesCount);
      const generated = this.generatedOf(index);
      const count = generated.countAt(due);
      if (count === 0) continue;
      const k = rng.chance(RECENT_SHARE) ? count - 1 - rng.int(Math.min(count, RECENT_POINTS)) : rng.int(count);
      const series = new SeriesPoints(generated, this.changed.get(index), due);
      // The existing points from the drawn one on (a deleted range may have taken the drawn one).
      const points = series.pointsFrom(generated.timestampOf(k));
      // A new value for a written point: the series' own kind of value, drawn under another key.
      const shape: ValueShape = { ...generated.shape, key: rng.int(0x1_0000_0000) };
      const draw = rng.next();
      const change =
        draw < LATE_SHARE
          ? latePoints(points, 1 + rng.int(MAX_WRITTEN), rng, shape, k)
          : draw < LATE_SHARE + CORRECTED_SHARE
            ? corrected(points, 1 + rng.int(MAX_WRITTEN), shape, k)
            : deletedRange(points, 1 + rng.int(MAX_DELETED));
      if (change === undefined) return;
      const changes = this.changed.get(index) ?? new SeriesChanges();
      this.changed.set(index, changes);
      if ('delete' in change) changes.delete(change.delete);
      else for (const point of change.upserts) changes.upsert(point);
      this.applied.push({ series: index, appliedAt: due, ...change });
      return;
    }
  }
}

type Change = { upserts: Datapoint[] } | { delete: DeletedRange };

/** Up to `wanted` points written between existing ones, one in each gap from the first point on. */
function latePoints(
  points: Iterator<SeriesPoint>,
  wanted: number,
  rng: Rng,
  shape: ValueShape,
  k: number,
): Change | undefined {
  const upserts: Datapoint[] = [];
  let previous = points.next();
  for (let next = points.next(); !previous.done && !next.done && upserts.length < wanted; next = points.next()) {
    const gap = next.value.timestamp - previous.value.timestamp;
    if (gap > 1) upserts.push(written(previous.value.timestamp + 1 + rng.int(gap - 1), shape, k + upserts.length));
    previous = next;
  }
  return upserts.length > 0 ? { upserts } : undefined;
}

/** Up to `wanted` existing points from the first on, each with a new value (and status, on a series with statuses). */
function corrected(points: Iterator<SeriesPoint>, wanted: number, shape: ValueShape, k: number): Change | undefined {
  const upserts: Datapoint[] = [];
  for (let point = points.next(); !point.done && upserts.length < wanted; point = points.next()) {
    upserts.push(written(point.value.timestamp, shape, k + upserts.length));
  }
  return upserts.length > 0 ? { upserts } : undefined;
}

/** The range from the first existing point that holds `wanted` of them (fewer at the series' end). */
function deletedRange(points: Iterator<SeriesPoint>, wanted: number): Change | undefined {
  const first = points.next();
  if (first.done) return undefined;
  let last = first.value.timestamp;
  for (let taken = 1, point = points.next(); !point.done; taken++, point = points.next()) {
    if (taken === wanted) {
      return { delete: { inclusiveBegin: first.value.timestamp, exclusiveEnd: point.value.timestamp } };
    }
    last = point.value.timestamp;
  }
  return { delete: { inclusiveBegin: first.value.timestamp, exclusiveEnd: last + 1 } };
}

/** A written point at `timestamp`: the value and status point k would have under the shape's key. */
function written(timestamp: number, shape: ValueShape, k: number): Datapoint {
  const point: Datapoint = { timestamp };
  const value = valueOf(shape, k);
  if (value !== undefined) point.value = value;
  const status = statusOf(shape, k);
  if (status !== undefined) point.status = status;
  return point;
}
